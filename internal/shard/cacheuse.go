package shard

import (
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// CacheUse is what the engine cache did in one shard's run. Each shard
// restores and saves its own part of the cache, so a shard with many
// misses is the one whose part was lost or went stale.
type CacheUse struct {
	Shard  int // 1-based, in the order the reports were given
	Builds int
	Hits   int // builds whose engine came from the cache
	Misses int // builds the cache was asked for and did not have, or --rebuild named
	// Shared is whether the shard had a shared store; then FromStore is
	// how many of its hits came from the store, Pushed how many builds'
	// entries it put there.
	Shared            bool
	FromStore, Pushed int
}

// CacheByShard counts hits and misses in each shard report; nil when no
// shard used a cache.
func CacheByShard(reports []*report.Report) []CacheUse {
	var out []CacheUse
	used := false
	for i, r := range reports {
		u := CacheUse{Shard: i + 1, Builds: len(r.Builds), Shared: r.Cache != nil}
		for _, b := range r.Builds {
			switch {
			case b.Cache == nil, b.Cache.Key == "": // no cache, or no key to ask it with
			case b.Cache.Hit:
				u.Hits++
			default:
				u.Misses++
			}
		}
		if u.Shared {
			shared := report.SharedCacheUse(r)
			u.FromStore, u.Pushed = shared.Hits, shared.Pushes
		}
		used = used || u.Hits+u.Misses > 0
		out = append(out, u)
	}
	if !used {
		return nil
	}
	return out
}

// Line is one shard's use in words: "shard 2: engine cache hits 8,
// misses 2 (10 builds)", and with a shared store "shard 2: engine cache
// hits 8 (5 from the shared cache), misses 2, pushed 2 (10 builds)".
func (u CacheUse) Line() string {
	if !u.Shared {
		return fmt.Sprintf("shard %d: engine cache hits %d, misses %d (%s)", u.Shard, u.Hits, u.Misses, text.Count(u.Builds, "build"))
	}
	return fmt.Sprintf("shard %d: engine cache hits %d (%d from %s), misses %d, pushed %d (%s)",
		u.Shard, u.Hits, u.FromStore, report.SharedCache, u.Misses, u.Pushed, text.Count(u.Builds, "build"))
}

// CacheTable renders the shards' cache use as a Markdown section for the
// merged summary and comment, with the shared store's columns when a
// shard had one; "" when no shard used a cache.
func CacheTable(uses []CacheUse) string {
	if len(uses) == 0 {
		return ""
	}
	shared := false
	for _, u := range uses {
		shared = shared || u.Shared
	}
	var sb strings.Builder
	if !shared {
		sb.WriteString("\n### Engine cache by shard\n\n| Shard | Builds | Hits | Misses |\n|--:|--:|--:|--:|\n")
		for _, u := range uses {
			fmt.Fprintf(&sb, "| %d | %d | %d | %d |\n", u.Shard, u.Builds, u.Hits, u.Misses)
		}
		return sb.String()
	}
	sb.WriteString("\n### Engine cache by shard\n\n| Shard | Builds | Hits | From the shared cache | Misses | Pushed |\n|--:|--:|--:|--:|--:|--:|\n")
	for _, u := range uses {
		from, pushed := "—", "—"
		if u.Shared {
			from, pushed = fmt.Sprint(u.FromStore), fmt.Sprint(u.Pushed)
		}
		fmt.Fprintf(&sb, "| %d | %d | %d | %s | %d | %s |\n", u.Shard, u.Builds, u.Hits, from, u.Misses, pushed)
	}
	return sb.String()
}
