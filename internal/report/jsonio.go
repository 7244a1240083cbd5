package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/trt-action/trt-action/internal/atomicfile"
)

// WriteJSON writes r to path with the project's one file writer: whole or
// not at all for a file, straight through for a FIFO or device.
func WriteJSON(path string, r *Report) error {
	cache := r.encoded
	if cache == nil {
		cache = &buildCache{} // used for this write only
	}
	return atomicfile.WriteFrom(path, func(w io.Writer) error {
		if err := cache.encode(w, r); err != nil {
			return fmt.Errorf("encode report: %w", err)
		}
		return nil
	})
}

// ReadJSON reads a report written by WriteJSON. Syntax errors name
// file:line:col; a report from a newer schema is refused.
func ReadJSON(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, jsonError(path, data, err)
	}
	switch {
	case r.Version == 0:
		return nil, fmt.Errorf("%s: not a trt-action report (no \"version\")", path)
	case r.Version > SchemaVersion:
		return nil, fmt.Errorf("%s: report version %d is newer than this tool reads (up to %d)", path, r.Version, SchemaVersion)
	}
	upgrade(&r)
	if r.Interrupted != "" && r.Signal == "" {
		r.Signal = signalIn(r.Interrupted)
	}
	return &r, nil
}

// signalIn is the signal a report written before Report.Signal existed
// names in its Interrupted words ("SIGTERM after 3s", or a merge's "shard
// 2: SIGINT after 1s; …": the first one named). Those words always began
// with the signal's name; words naming neither were still an interrupt,
// read as the usual one, SIGINT.
func signalIn(words string) string {
	if m := signalWord.FindString(words); m != "" {
		return m
	}
	return SignalInterrupt
}

var signalWord = regexp.MustCompile(SignalInterrupt + "|" + SignalTerminate)

// upgrade brings an older report to this version in memory, so merge,
// baseline comparison and every view read one form. A version 1 report has
// only the every-instance tree: it is folded, and kept as the full detail.
func upgrade(r *Report) {
	if r.Version >= SchemaVersion {
		return
	}
	for i := range r.Builds {
		b := &r.Builds[i]
		if b.PhaseTree == nil && len(b.Phases) > 0 {
			b.PhaseTree, b.SlowestPhases = FoldInstances(b.Phases, b.DurationMs, DefaultSlowestInstances)
		}
	}
	r.Version = SchemaVersion
}

func jsonError(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	offset := int64(-1)
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	}
	if offset < 0 {
		return fmt.Errorf("%s: %w", path, err)
	}
	// Offset counts the offending byte as read; point at it.
	line, col := lineCol(data, max(0, offset-1))
	return fmt.Errorf("%s:%d:%d: %w", path, line, col, err)
}

// lineCol turns a byte offset into 1-based line and column.
func lineCol(data []byte, offset int64) (int, int) {
	offset = min(offset, int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}
