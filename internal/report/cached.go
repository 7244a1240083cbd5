package report

import (
	"fmt"
	"strings"
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
// 2026-11-28 10:02 UTC in 14m3s" (a log line's words), and for an engine
// pulled from the shared store "from the shared cache, built …"; "" for a
// build that is not a hit, or a hit from the cache folder that knows
// neither when nor how long its engine was built.
func CacheOrigin(b *Build, now time.Time) string {
	c := b.Cache
	if b.Status != StatusCached || c == nil {
		return ""
	}
	var parts []string
	if c.From == CacheFromRemote {
		parts = append(parts, "from "+SharedCache)
	}
	if c.BuiltAt.IsZero() && c.BuildMs <= 0 {
		return strings.Join(parts, ", ")
	}
	built := "built"
	switch {
	case c.BuiltAt.IsZero():
	case now.IsZero():
		built += " " + c.BuiltAt.UTC().Format("2006-01-02 15:04 UTC")
	default:
		built += " " + text.Age(now.Sub(c.BuiltAt))
	}
	if c.BuildMs > 0 {
		built += " in " + text.DurationMs(c.BuildMs)
	}
	return strings.Join(append(parts, built), ", ")
}

// CacheStoreNote says what an ok build did to the engine cache:
// "rebuilt; cache entry replaced" (--rebuild: its engine took the place of
// the entry that was there), "rebuilt; stored in the cache" (there was
// none), "rebuilt" (nothing stored: a read-only cache, or one of its
// warnings says why), "stored in the cache"; each followed by "; pushed to
// the shared cache" when this run put the entry in the shared store, which
// a hit the store lacked says alone. "" for a build that stored and
// pushed nothing and was not rebuilt, or a build that did not succeed.
func CacheStoreNote(b *Build) string {
	c := b.Cache
	if c == nil || !Succeeded(b.Status) {
		return ""
	}
	var note string
	switch {
	case b.Status != StatusOK: // a hit: nothing stored in the folder
	case c.Rebuilt && c.Replaced:
		note = "rebuilt; cache entry replaced"
	case c.Rebuilt && c.Stored:
		note = "rebuilt; stored in the cache"
	case c.Rebuilt:
		note = "rebuilt"
	case c.Stored:
		note = "stored in the cache"
	}
	if c.Pushed {
		note = strings.TrimPrefix(note+"; pushed to "+SharedCache, "; ")
	}
	return note
}

// RebuildNote is CacheStoreNote for a build --rebuild rebuilt, "" for the
// rest: for the views with no room to say of every build of a first run
// that it was stored (the summary's rows, the terminal's final table).
func RebuildNote(b *Build) string {
	if b.Cache == nil || !b.Cache.Rebuilt {
		return ""
	}
	return CacheStoreNote(b)
}

// CacheWarningPrefix begins every warning the engine cache gives a build
// (a corrupt entry, a store that failed, this run's engines evicted), so
// that the summary can gather them.
const CacheWarningPrefix = "engine cache: "

// maxCacheWarnings is how many cache warnings the summary quotes.
const maxCacheWarnings = 5

// cacheWarnings is the summary's note of the engine cache's warnings for
// builds that succeeded: a build that did not has them in its own
// section. The build stays ok, but a cache that keeps nothing should not
// go unseen. "" without any.
func cacheWarnings(builds []Build) string {
	var lines []string
	total := 0
	for i := range builds {
		b := &builds[i]
		if failed(b) {
			continue
		}
		for _, w := range b.Warnings {
			msg, ok := strings.CutPrefix(w, CacheWarningPrefix)
			if !ok {
				continue
			}
			total++
			if len(lines) < maxCacheWarnings {
				lines = append(lines, fmt.Sprintf("- ⚠️ %s: %s\n", text.Markdown(text.CutRunes(b.Name, 80)), text.Markdown(text.CutRunes(msg, 300))))
			}
		}
	}
	if total == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n**Engine cache: %s**\n\n", text.Count(total, "warning"))
	for _, l := range lines {
		sb.WriteString(l)
	}
	if total > len(lines) {
		fmt.Fprintf(&sb, "- … and %d more; see the JSON report.\n", total-len(lines))
	}
	return sb.String()
}
