package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// A report is rewritten at every checkpoint while a matrix runs; with
// thousands of builds, encoding all of them each time made a checkpoint
// cost seconds, and checkpoints, spaced by their cost, fell far behind the
// builds. A build that has ended changes only through Settle (its push to
// the shared store ending later), which encodes it anew, so its encoding
// is kept and a checkpoint only writes bytes. The report is compact JSON with one
// build per line.

// KeepEncodings makes WriteJSON encode each build of r once it has ended
// and reuse that encoding in later writes. Only for a report whose ended
// builds change only through Settle, as the supervisor's. The encodings are kept in
// an unlinked temporary file, so a matrix's finished builds do not hold
// memory for them; in memory when no such file can be made.
func (r *Report) KeepEncodings() {
	c := &buildCache{}
	if f, err := os.CreateTemp("", "trt-action-report-*"); err == nil {
		_ = os.Remove(f.Name()) // the open file stays readable until the process ends
		c.spool = f
	}
	r.encoded = c
}

// buildCache holds the encoding of each build that has ended, by index.
type buildCache struct {
	spool   *os.File // nil: encodings in memory
	size    int64
	entries []cachedBuild
}

type cachedBuild struct {
	key    buildKey
	off, n int64  // in the spool
	json   []byte // without a spool
	ok     bool
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

// writeBuild writes b's JSON to w: from the cache when it has ended and was
// encoded before, else encoded now (and kept, once it has ended).
func (c *buildCache) writeBuild(w io.Writer, i int, b *Build) error {
	if !ended(b) {
		return writeMarshalled(w, b)
	}
	if e := c.entry(i); e.ok && e.key == keyOf(b) {
		_, err := io.Copy(w, c.encoding(e))
		return err
	}
	data, err := c.store(i, b)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// store encodes b, an ended build, and keeps the encoding as build i's. It
// returns the encoding; an encoding the spool refused is not kept, and is
// made again next time.
func (c *buildCache) store(i int, b *Build) ([]byte, error) {
	data, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	e := c.entry(i)
	*e = cachedBuild{key: keyOf(b), ok: true}
	if c.spool == nil {
		e.json = data
	} else if _, err := c.spool.WriteAt(data, c.size); err != nil {
		e.ok = false // not kept: encoded again next time
	} else {
		e.off, e.n = c.size, int64(len(data))
		c.size += e.n
	}
	return data, nil
}

// entry is build i's place in the cache, made on first use.
func (c *buildCache) entry(i int) *cachedBuild {
	if i >= len(c.entries) {
		c.entries = append(c.entries, make([]cachedBuild, i+1-len(c.entries))...)
	}
	return &c.entries[i]
}

// spooled is whether build i's encoding is in the spool.
func (c *buildCache) spooled(i int) bool {
	return c.spool != nil && i < len(c.entries) && c.entries[i].ok
}

// encoding reads a kept encoding.
func (c *buildCache) encoding(e *cachedBuild) io.Reader {
	if c.spool == nil {
		return bytes.NewReader(e.json)
	}
	return io.NewSectionReader(c.spool, e.off, e.n)
}

func writeMarshalled(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err == nil {
		_, err = w.Write(data)
	}
	return err
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
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
		if err := c.writeBuild(bw, i, &r.Builds[i]); err != nil {
			return fmt.Errorf("build %d: %w", i+1, err)
		}
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}
