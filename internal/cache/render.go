package cache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trt-action/trt-action/internal/text"
)

// What cache ls and cache prune print: pure functions of a listing or a
// prune and the time, with golden tests (testdata/*.golden.*). The
// command line only prints them.

// ListedEntry is an entry as cache ls --json prints it.
type ListedEntry struct {
	Key        Key       `json:"key"`
	Build      string    `json:"build"`
	Backend    string    `json:"backend"`
	Library    string    `json:"library,omitempty"`
	Target     string    `json:"target,omitempty"`
	BuiltAt    time.Time `json:"built_at,omitzero"`
	DurationMs int64     `json:"duration_ms"`
	Bytes      int64     `json:"bytes"`      // its files: the engine, or a build with run:'s engines and outputs
	DiskBytes  int64     `json:"disk_bytes"` // its files and its metadata: what max-size counts
	SHA256     string    `json:"sha256"`     // the (first) engine's
	Files      int       `json:"files"`      // how many files it has
	LastUsed   time.Time `json:"last_used,omitzero"`
	// Broken says why the entry can never be served (its fields are what
	// could be read); prune removes it first, verify removes it.
	Broken string `json:"broken,omitempty"`
}

// ListingJSON is cache ls --json: the entries as one JSON array, in the
// listing's order, and a newline.
func ListingJSON(entries []Entry) ([]byte, error) {
	listed := make([]ListedEntry, 0, len(entries))
	for _, e := range entries {
		listed = append(listed, ListedEntry{Key: e.Key, Build: e.Build, Backend: e.Backend, Library: e.Library, Target: e.Target,
			BuiltAt: e.BuiltAt, DurationMs: e.Duration.Milliseconds(), Bytes: e.Bytes(), DiskBytes: e.DiskSize,
			SHA256: e.Engine().SHA256, Files: len(e.Files), LastUsed: e.LastUsed, Broken: e.Broken})
	}
	var out bytes.Buffer
	if err := json.NewEncoder(&out).Encode(listed); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Warnings are what cache ls tells beside the entries: entries that can
// never be served, links that are not the cache's, and leftovers of
// killed stores.
func (l Listing) Warnings() []string {
	var out []string
	for _, e := range l.Entries {
		if e.Broken != "" {
			out = append(out, fmt.Sprintf("cache entry %s is broken: %s; it is never served (prune or verify removes it)", e.Key, e.Broken))
		}
	}
	for _, s := range l.Strays {
		out = append(out, fmt.Sprintf("%s is a symbolic link (to %s), not an entry: not listed, never followed (prune or verify removes the link)", s.Path, s.Target))
	}
	for _, s := range l.StagingLinks {
		out = append(out, fmt.Sprintf("%s is a symbolic link (to %s) in the staging folder, not the cache's: never followed (the next build, prune or verify removes the link)", s.Path, s.Target))
	}
	out = append(out, formatWarnings(l.OtherFormats)...)
	if l.Leftovers > 0 {
		out = append(out, fmt.Sprintf("%s in the staging folder (tmp/) of a store or removal that was killed; the next build, prune or verify removes them",
			text.Count(l.Leftovers, "leftover")))
	}
	return out
}

// ListingTable is cache ls's table, most recently used first, then the
// broken entries (marked, with what is known of them), and a total. A
// size is the entry's engine and metadata: what max-size counts.
func ListingTable(entries []Entry, now time.Time) string {
	var out bytes.Buffer
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "key\tbuild\tbackend\tsize\tbuilt\ttook\tlast used")
	var total int64
	broken := 0
	for _, e := range entries {
		total += e.DiskSize
		build := text.Plain(e.Build)
		if e.Broken != "" {
			broken++
			build = strings.TrimSpace(build + " (broken)")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Key[:12], build, orDash(text.Plain(e.Backend)),
			text.Bytes(e.DiskSize), agoOrDash(now, e.BuiltAt), orDash(durationOrEmpty(e.Duration)), agoOrDash(now, e.LastUsed))
	}
	tw.Flush()
	count := text.Count(len(entries), "entry")
	if broken > 0 {
		count += fmt.Sprintf(" (%d broken)", broken)
	}
	fmt.Fprintf(&out, "%s, %s (engines and their metadata: what max-size counts)\n", count, text.Bytes(total))
	return out.String()
}

// orDash is s, or "—" for what is not known.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// agoOrDash is how long before now t was ("3 hours ago", text.Age), or
// "—" when t is not known.
func agoOrDash(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return text.Age(now.Sub(t))
}

func durationOrEmpty(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return text.Duration(d)
}

// PrunedText is what cache prune prints: the links it removed, a line
// for each entry it removed, and a total. A prune that failed (failed)
// before removing any entry says only why, never "removed 0 entries":
// its error is printed instead.
func PrunedText(p Pruned, now time.Time, failed bool) string {
	var out strings.Builder
	var freed int64
	for _, o := range p.Formats {
		if o.Link != "" {
			fmt.Fprintf(&out, "removed %s (the link, never what it names)\n", o)
		} else {
			fmt.Fprintf(&out, "removed %s: this version never reads it\n", o)
		}
	}
	for _, s := range p.Strays {
		fmt.Fprintf(&out, "removed the link %s (to %s): not an entry, never followed\n", text.Plain(s.Path), text.Plain(s.Target))
	}
	for _, e := range p.Entries {
		freed += e.DiskSize
		fmt.Fprintln(&out, prunedLine(e, now))
	}
	if !failed || len(p.Entries) > 0 {
		fmt.Fprintf(&out, "removed %s, %s\n", text.Count(len(p.Entries), "entry"), text.Bytes(freed))
	}
	return out.String()
}

// prunedLine is prune's line for an entry it removed, with what is known
// of it: "removed 088ad82c9200 mlp (440.8 kB, last used 3 hours ago)", and
// for a broken entry why ("broken: its metadata is missing").
func prunedLine(e Entry, now time.Time) string {
	var facts []string
	if e.Broken != "" {
		facts = append(facts, "broken: "+e.Broken)
	}
	facts = append(facts, text.Bytes(e.DiskSize))
	if !e.LastUsed.IsZero() {
		facts = append(facts, "last used "+text.Age(now.Sub(e.LastUsed)))
	}
	line := "removed " + string(e.Key[:12])
	if e.Build != "" {
		line += " " + text.Plain(e.Build)
	}
	return line + " (" + strings.Join(facts, ", ") + ")"
}

// ExplainedKey is one build's key and what went into it (cache key
// --explain; --json prints a list of these).
type ExplainedKey struct {
	Build string    `json:"build"`
	Key   Key       `json:"key"`
	Parts []KeyPart `json:"parts"`
}

// NotInAKey is what cache key --explain says is left out of every key, so
// that a difference there is never looked for in the parts.
const NotInAKey = "not in a key: build names, budgets, output paths of builds without run: (engine, timing cache), matrix axes, the timing cache's content; a build with run:'s files other than its inputs and its program's (its packages' code)"

// ExplainText is cache key --explain's text: per build, its name and key,
// then each part on a line of its own, name and value (and the file a
// content hash is of), so the output of two runners can be compared with
// diff.
func ExplainText(keys []ExplainedKey) string {
	var out bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			out.WriteString("\n")
		}
		fmt.Fprintf(&out, "%s %s\n", text.Plain(k.Build), k.Key)
		tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
		for _, p := range k.Parts {
			value := text.Plain(p.Value)
			if p.File != "" {
				value += "  (" + text.Plain(p.File) + ")"
			}
			fmt.Fprintf(tw, "  %s\t%s\n", text.Plain(p.Name), value)
		}
		tw.Flush()
	}
	return out.String()
}
