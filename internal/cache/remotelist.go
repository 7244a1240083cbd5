package cache

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/text"
)

// What cache ls --remote and cache prune --remote find in a shared store:
// its entries, each with what its metadata says, parsed as strictly as a
// local entry's (decodeMeta, checkDecoded): an entry whose metadata is
// refused is listed as broken, with why. The metadata is the store's,
// untrusted: what is shown of it goes through internal/text.

// StoredEntry is one entry of a shared store as cache ls --remote shows it.
type StoredEntry struct {
	Key      Key       `json:"key"`
	Bytes    int64     `json:"bytes"` // the entry's files, as the store's records give them
	Uploaded time.Time `json:"uploaded,omitzero"`
	Build    string    `json:"build,omitempty"`   // the name of the build that made it
	Backend  string    `json:"backend,omitempty"` //
	// Library is the TensorRT library that built it, as that build named
	// it ("TensorRT-RTX 1.7.1.116"), else the files' build-ids the key has.
	Library string `json:"library,omitempty"`
	// GPU is the GPU a tensorrt engine was built for (part of its key).
	GPU     string    `json:"gpu,omitempty"`
	BuiltAt time.Time `json:"built_at,omitzero"`
	// Broken says why the entry's metadata is refused: a build never
	// takes it (it is a miss with a warning).
	Broken string `json:"broken,omitempty"`
}

// ListStore lists every entry of s, most recently uploaded first.
func ListStore(ctx context.Context, s remote.Store) ([]StoredEntry, error) {
	var out []StoredEntry
	err := s.List(ctx, func(l remote.Listed) error {
		out = append(out, storedEntry(l))
		return nil
	})
	slices.SortStableFunc(out, func(a, b StoredEntry) int { return b.Uploaded.Compare(a.Uploaded) })
	return out, err
}

// storedEntry is what l's metadata says of it, checked against its key,
// the cache format and its size.
func storedEntry(l remote.Listed) StoredEntry {
	se := StoredEntry{Key: Key(l.Key), Bytes: l.Size, Uploaded: l.Uploaded}
	switch {
	case l.Meta == nil:
		se.Broken = "its metadata could not be read"
		return se
	case len(l.Meta) > remote.MaxMetaBytes:
		se.Broken = fmt.Sprintf("its metadata has %d bytes, more than the %d an entry's may have", len(l.Meta), remote.MaxMetaBytes)
		return se
	}
	m, err := decodeMeta(l.Meta, true)
	if err == nil {
		var e Entry
		if e, err = checkDecoded(m, l.Uploaded, int64(len(l.Meta)), Key(l.Key)); err == nil && e.Bytes() != l.Size {
			err = fmt.Errorf("its files hold %d bytes in the store, its metadata says %d", l.Size, e.Bytes())
		}
	}
	if err != nil {
		se.Broken = err.Error()
	}
	e := m.Entry
	se.Build, se.Backend, se.GPU, se.BuiltAt = e.Build, e.Backend, e.Target, e.BuiltAt
	se.Library = e.Library
	if e.Original != nil && e.Original.Library != "" {
		se.Library = e.Original.Library
	}
	return se
}

// StoreListingJSON is cache ls --remote --json: the entries as one JSON
// array, and a newline.
func StoreListingJSON(entries []StoredEntry) ([]byte, error) {
	if entries == nil {
		entries = []StoredEntry{}
	}
	var out bytes.Buffer
	if err := json.NewEncoder(&out).Encode(entries); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// StoreListingTable is cache ls --remote's table: key, size, age (since
// upload), build, library, GPU, broken entries marked, and a total line
// naming the store (its URL without credentials).
func StoreListingTable(location string, entries []StoredEntry, now time.Time) string {
	var out bytes.Buffer
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "key\tsize\tuploaded\tbuild\tlibrary\tgpu")
	var total int64
	broken := 0
	for _, e := range entries {
		total += e.Bytes
		build := text.Plain(text.CutRunes(e.Build, 60))
		if e.Broken != "" {
			broken++
			build = strings.TrimSpace(build + " (broken)")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Key[:min(12, len(e.Key))], text.Bytes(e.Bytes), agoOrDash(now, e.Uploaded),
			orDash(build), orDash(text.Plain(text.CutRunes(e.Library, 60))), orDash(text.Plain(text.CutRunes(e.GPU, 60))))
	}
	tw.Flush()
	count := text.Count(len(entries), "entry")
	if broken > 0 {
		count += fmt.Sprintf(" (%d broken)", broken)
	}
	fmt.Fprintf(&out, "%s, %s in %s\n", count, text.Bytes(total), text.Plain(location))
	return out.String()
}

// StoreWarnings are what cache ls --remote tells beside the table: each
// broken entry and why (the store's text, untrusted: the caller prints it
// as such).
func StoreWarnings(entries []StoredEntry) []string {
	var out []string
	for _, e := range entries {
		if e.Broken != "" {
			out = append(out, fmt.Sprintf("shared store entry %s is broken: %s; a build never takes it (a read-write run's build of its key replaces it)", e.Key, e.Broken))
		}
	}
	return out
}

// ErrNoDeletion is PruneStore's error for a store that does not allow
// deletion: it names what removes old entries there instead.
var ErrNoDeletion = errors.New("the store does not allow deleting entries; expire them with the store's own rules instead: " +
	"an S3 lifecycle rule (an Expiration after N days on the prefix), or the registry's retention policy " +
	"(GHCR: delete old package versions, e.g. with actions/delete-package-versions; Harbor, ECR, Artifactory and GitLab: tag retention rules)")

// StorePruned is what PruneStore removed.
type StorePruned struct {
	Entries []StoredEntry
	// Undated counts entries the store gives no upload time for: never
	// removed by age.
	Undated int
	// Swept is what the store's sweep removed after (remote.Sweeper):
	// files no entry names any more.
	Swept remote.Swept
}

// PruneStore removes every entry of s uploaded more than olderThan before
// now, oldest first; then, where the store keeps files apart from its
// entries (remote.Sweeper), the files no entry names. A store that does
// not allow deletion is ErrNoDeletion, with nothing removed.
func PruneStore(ctx context.Context, s remote.Store, olderThan time.Duration, now time.Time) (StorePruned, error) {
	var done StorePruned
	entries, err := ListStore(ctx, s)
	if err != nil {
		return done, err
	}
	slices.SortStableFunc(entries, func(a, b StoredEntry) int { return cmp.Compare(a.Uploaded.UnixNano(), b.Uploaded.UnixNano()) })
	for _, e := range entries {
		switch {
		case e.Uploaded.IsZero():
			done.Undated++
			continue
		case now.Sub(e.Uploaded) <= olderThan:
			continue
		}
		err := s.Delete(ctx, string(e.Key))
		switch {
		case errors.Is(err, remote.ErrUnsupported) && len(done.Entries) == 0:
			return done, fmt.Errorf("%s: %w", s.Location(), ErrNoDeletion)
		case errors.Is(err, remote.ErrNotFound): // another prune was first
			continue
		case err != nil:
			return done, err
		}
		done.Entries = append(done.Entries, e)
	}
	if sw, ok := s.(remote.Sweeper); ok && len(done.Entries) > 0 {
		done.Swept, err = sw.Sweep(ctx, remote.SweepGrace)
	}
	return done, err
}

// StorePrunedText is what cache prune --remote prints: a line for each
// entry it removed, what a sweep freed, and a total.
func StorePrunedText(location string, p StorePruned, now time.Time) string {
	var out strings.Builder
	var freed int64
	for _, e := range p.Entries {
		freed += e.Bytes
		line := "removed " + string(e.Key[:min(12, len(e.Key))])
		if e.Build != "" {
			line += " " + text.Plain(text.CutRunes(e.Build, 60))
		}
		fmt.Fprintf(&out, "%s (%s, uploaded %s)\n", line, text.Bytes(e.Bytes), text.Age(now.Sub(e.Uploaded)))
	}
	if p.Undated > 0 {
		fmt.Fprintf(&out, "kept %s the store gives no upload time for\n", text.Count(p.Undated, "entry"))
	}
	if p.Swept.Files > 0 {
		fmt.Fprintf(&out, "removed %s no entry names any more, %s\n", text.Count(p.Swept.Files, "file"), text.Bytes(p.Swept.Bytes))
	}
	fmt.Fprintf(&out, "removed %s, %s, from %s\n", text.Count(len(p.Entries), "entry"), text.Bytes(freed), text.Plain(location))
	return out.String()
}
