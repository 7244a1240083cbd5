package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/text"
)

// The shared cache store in words: how a transfer between a build and the
// store reads while it runs and when it ends, and what a run moved in all.
// The log, the terminal, the summary and JUnit all say it this way.

// SharedCache is what every view calls the shared store behind the cache
// folder.
const SharedCache = "the shared cache"

// TransferArrow marks a transfer's direction: ⇣ a pull, ⇡ a push.
func TransferArrow(direction string) string {
	if direction == TransferPush {
		return "⇡"
	}
	return "⇣"
}

// TransferLeft is how long a transfer of total bytes, bytes of which moved
// in elapsed, has left at the rate so far; false when that cannot be told
// (the total is not known, or nothing has moved yet).
func TransferLeft(bytes, total int64, elapsed time.Duration) (time.Duration, bool) {
	if total <= 0 || bytes <= 0 || elapsed <= 0 || bytes > total {
		return 0, false
	}
	return time.Duration(float64(elapsed) * float64(total-bytes) / float64(bytes)), true
}

// TransferStart is a transfer's first line: "pulling 1.1 GB from the
// shared cache", "pushing 1.1 GB to the shared cache" (without the size
// when it is not known).
func TransferStart(direction string, total int64) string {
	verb, prep := "pulling", "from"
	if direction == TransferPush {
		verb, prep = "pushing", "to"
	}
	if total > 0 {
		return fmt.Sprintf("%s %s %s %s", verb, text.Bytes(total), prep, SharedCache)
	}
	return fmt.Sprintf("%s %s %s", verb, prep, SharedCache)
}

// TransferProgress is where a transfer is: "312.5 MB of 1.1 GB, 85.3
// MB/s, 9.0s left" (the parts that are known).
func TransferProgress(bytes, total int64, elapsed time.Duration) string {
	parts := []string{text.Bytes(bytes)}
	if total > 0 {
		parts[0] += " of " + text.Bytes(total)
	}
	if elapsed > 0 {
		parts = append(parts, text.Rate(bytes, elapsed))
	}
	if left, ok := TransferLeft(bytes, total, elapsed); ok {
		parts = append(parts, text.Duration(left)+" left")
	}
	return strings.Join(parts, ", ")
}

// TransferEnd is a transfer's last line: "1.1 GB pulled from the shared
// cache in 12.6s (85.3 MB/s)", "1.1 GB sent to the shared cache in …", or
// for one that stopped short, "pull from the shared cache stopped after
// 312.5 MB: why" (why is the store's or the client's words: untrusted
// text, which views escape as they do TensorRT's).
func TransferEnd(direction string, bytes int64, elapsed time.Duration, why string) string {
	if why != "" {
		noun, prep := "pull", "from"
		if direction == TransferPush {
			noun, prep = "push", "to"
		}
		return fmt.Sprintf("%s %s %s stopped after %s: %s", noun, prep, SharedCache, text.Bytes(bytes), why)
	}
	verb := "pulled from"
	if direction == TransferPush {
		verb = "sent to"
	}
	return fmt.Sprintf("%s %s %s in %s (%s)", text.Bytes(bytes), verb, SharedCache, text.Duration(elapsed), text.Rate(bytes, elapsed))
}

// SharedUse is what a run's builds did with the shared store.
type SharedUse struct {
	Hits        int   // builds whose engine came from the store
	PulledBytes int64 // what those pulls moved
	PullMs      int64
	Pushes      int   // builds whose entry this run put in the store
	PushedBytes int64 // what every push moved (also pushes another runner beat)
	PushMs      int64
	HasStore    bool // the run had a store (Report.Cache)
}

// SharedCacheUse counts what r's builds pulled from and pushed to the
// shared store.
func SharedCacheUse(r *Report) SharedUse {
	u := SharedUse{HasStore: r.Cache != nil}
	for i := range r.Builds {
		c := r.Builds[i].Cache
		if c == nil {
			continue
		}
		if c.Hit && c.From == CacheFromRemote {
			u.Hits++
		}
		if c.Pushed {
			u.Pushes++
		}
		if t := c.Transfer; t != nil {
			switch t.Direction {
			case TransferPull:
				u.PulledBytes += t.Bytes
				u.PullMs += t.Ms
			case TransferPush:
				u.PushedBytes += t.Bytes
				u.PushMs += t.Ms
			}
		}
	}
	return u
}

// SharedCacheLine is the run's use of the store in one line: "3 builds
// from the shared cache (2.1 GB pulled), 5 pushed (4.0 GB sent)"; "" for a
// run without a store.
func SharedCacheLine(r *Report) string {
	u := SharedCacheUse(r)
	if !u.HasStore {
		return ""
	}
	from := fmt.Sprintf("%s from %s", text.Count(u.Hits, "build"), SharedCache)
	if u.PulledBytes > 0 {
		from += fmt.Sprintf(" (%s pulled in %s)", text.Bytes(u.PulledBytes), text.DurationMs(u.PullMs))
	}
	pushed := fmt.Sprintf("%d pushed", u.Pushes)
	if u.PushedBytes > 0 {
		pushed += fmt.Sprintf(" (%s sent in %s)", text.Bytes(u.PushedBytes), text.DurationMs(u.PushMs))
	}
	return from + ", " + pushed
}

// RemoteText names the run's store and its mode: "oci://ghcr.io/acme/engines
// (read-only)". The URL is the report's, never with credentials.
func RemoteText(c *RunCache) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s (%s)", c.Remote, c.RemoteMode)
}

// maxRemoteWarnings is how many of the store's warnings the summary quotes.
const maxRemoteWarnings = 5

// sharedCacheSection is the summary's lines under the table of builds for
// a run with a shared store: which store, in which mode (and why it is
// not the one asked for), what moved, and what went wrong with it. The
// store's URL and warnings are escaped: the URL is the user's, the
// warnings quote what the store answered.
func sharedCacheSection(r *Report) string {
	c := r.Cache
	if c == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n**Shared engine cache:** %s — %s.\n", text.Markdown(RemoteText(c)), text.Markdown(SharedCacheLine(r)))
	if c.ModeNote != "" {
		fmt.Fprintf(&b, "\n%s\n", text.Markdown(text.CutRunes(c.ModeNote, 500)))
	}
	if len(c.Remotes) > 1 {
		var names []string
		for _, s := range c.Remotes {
			names = append(names, text.Markdown(s))
		}
		fmt.Fprintf(&b, "\nThe shards used different stores: %s.\n", strings.Join(names, ", "))
	}
	if len(c.Warnings) > 0 {
		b.WriteString("\n")
	}
	for _, w := range c.Warnings[:min(len(c.Warnings), maxRemoteWarnings)] {
		fmt.Fprintf(&b, "- ⚠️ %s\n", text.Markdown(text.CutRunes(w, 300)))
	}
	if n := len(c.Warnings) - maxRemoteWarnings; n > 0 {
		fmt.Fprintf(&b, "- … and %d more; see the JSON report.\n", n)
	}
	return b.String()
}
