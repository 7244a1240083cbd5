package build

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/trace"
)

// traceRecorder writes one build's callbacks as a trace file (--record-trace).
type traceRecorder struct {
	f   io.WriteCloser
	buf *bufio.Writer
	w   *trace.Writer
}

func newTraceRecorder(dir, build string) (*traceRecorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := atomicfile.Live(TraceFile(dir, build))
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriter(f)
	return &traceRecorder{f: f, buf: buf, w: trace.NewWriter(buf)}, nil
}

func (t *traceRecorder) write(ev trace.Event) { _ = t.w.Write(ev) }

func (t *traceRecorder) close() {
	_ = t.w.Flush()
	_ = t.buf.Flush()
	_ = t.f.Close()
}

// TraceFile is the file --record-trace DIR records build's callbacks in.
func TraceFile(dir, build string) string {
	return filepath.Join(dir, fileSafe(build)+".jsonl")
}

// fileSafe turns a build name into a file name.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}
