package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// A report is rewritten at every checkpoint while a matrix runs; with
// thousands of builds, encoding all of them each time made a checkpoint
// cost seconds, and checkpoints, spaced by their cost, fell far behind the
// builds. A build that has ended never changes, so its encoding is kept
// and a checkpoint only writes bytes. The report is compact JSON with one
// build per line.

// KeepEncodings makes WriteJSON encode each build of r once it has ended
// and reuse that encoding in later writes. Only for a report whose ended
// builds never change again, as the supervisor's.
func (r *Report) KeepEncodings() { r.encoded = &buildCache{} }

// buildCache holds the encoding of each build that has ended, by index.
type buildCache struct {
	entries []cachedBuild
}

type cachedBuild struct {
	key  buildKey
	json []byte
}

// buildKey is what would show that a build changed after it was encoded.
type buildKey struct {
	name, status          string
	startMs, durationMs   int64
	callbacks             int64
	reasonLen, warningLen int
}

func keyOf(b *Build) buildKey {
	return buildKey{b.Name, b.Status, b.StartMs, b.DurationMs, b.Callbacks, len(b.Reason), len(b.Warnings)}
}

// ended is whether a build's status is final.
func ended(b *Build) bool { return b.Status != StatusPending && b.Status != StatusRunning }

// encodedBuild is b's JSON, from the cache when it has ended and was
// encoded before.
func (c *buildCache) encodedBuild(i int, b *Build) ([]byte, error) {
	if !ended(b) {
		return json.Marshal(b)
	}
	if i >= len(c.entries) {
		c.entries = append(c.entries, make([]cachedBuild, i+1-len(c.entries))...)
	}
	e := &c.entries[i]
	if e.json != nil && e.key == keyOf(b) {
		return e.json, nil
	}
	data, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	*e = cachedBuild{key: keyOf(b), json: data}
	return data, nil
}

// reportHead is the report without its builds: the Builds field here
// hides Report's, and is always empty, so it is left out.
type reportHead struct {
	*Report
	Builds []Build `json:"builds,omitempty"`
}

// encode writes r as JSON: its fields, then "builds" with one build a line.
func (c *buildCache) encode(w io.Writer, r *Report) error {
	head, err := json.Marshal(reportHead{Report: r})
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(bytes.TrimSuffix(head, []byte("}")))
	bw.WriteString(`,"builds":[`)
	for i := range r.Builds {
		data, err := c.encodedBuild(i, &r.Builds[i])
		if err != nil {
			return fmt.Errorf("build %d: %w", i+1, err)
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
		bw.Write(data)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}
