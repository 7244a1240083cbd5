package report

import (
	"time"

	"github.com/trt-action/trt-action/internal/text"
)

// CacheNote says what a cache hit saved: "cached: built 2 days ago in
// 14m3s". The age counts from now, which renderers take from the report
// (its start), so rendering one report twice gives the same text; with a
// zero now (a live log line, which has no report yet) it names the date
// instead: "cached: built 2026-11-28 10:02 UTC in 14m3s". "" for a build
// that is not a hit.
func CacheNote(b *Build, now time.Time) string {
	if b.Status != StatusCached {
		return ""
	}
	if origin := CacheOrigin(b, now); origin != "" {
		return "cached: " + origin
	}
	return "cached"
}

// CacheOrigin is the part of CacheNote after "cached: ": "built
// 2026-11-28 10:02 UTC in 14m3s" (a log line's words); "" for a build that
// is not a hit, or a hit that knows neither when nor how long its engine
// was built.
func CacheOrigin(b *Build, now time.Time) string {
	c := b.Cache
	if b.Status != StatusCached || c == nil || c.BuiltAt.IsZero() && c.BuildMs <= 0 {
		return ""
	}
	origin := "built"
	switch {
	case c.BuiltAt.IsZero():
	case now.IsZero():
		origin += " " + c.BuiltAt.UTC().Format("2006-01-02 15:04 UTC")
	default:
		origin += " " + text.Age(now.Sub(c.BuiltAt))
	}
	if c.BuildMs > 0 {
		origin += " in " + text.DurationMs(c.BuildMs)
	}
	return origin
}
