//go:build cgo

package native

/*
#include <stdlib.h>
#include <string.h>
#include "simsource.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/trt-action/trt-action/internal/trace"
)

// fileSource is a trace file the simulator plays as it reads it: a chunk
// of events per read (sim.cc's kChunk), so the worker's memory does not
// grow with the file and a stop waits for one chunk at most. Phase names
// are copied to C once each and live until close, as sim.h asks.
type fileSource struct {
	path  string
	f     *os.File
	r     *trace.Reader
	err   error // a bad line, reported by the read after the events before it
	names cNames
}

func openFileSource(path string) (*fileSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s := &fileSource{path: path, f: f, names: cNames{}}
	s.r = trace.NewReader(f, path)
	return s, nil
}

// read fills buf with the next events; 0 at the end of the file. A bad
// line ends the chunk before it, and the next read reports it, so every
// event before it plays.
func (s *fileSource) read(buf []C.tam_sim_event) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n := 0
	for n < len(buf) {
		ev, err := s.r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if s.err = err; n == 0 {
				return 0, err
			}
			break
		}
		toSimEvent(&buf[n], ev, s.names)
		n++
	}
	return n, nil
}

// rewind starts the file again, for a repeated replay.
func (s *fileSource) rewind() error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("simulator: %s: %w", s.path, err)
	}
	s.r, s.err = trace.NewReader(s.f, s.path), nil
	return nil
}

// countLines counts the file's events (one a line) for a fault, which
// strikes at a share of them; cancelled is asked between blocks, so a stop
// does not wait for a large file to be read through. It leaves the file
// where it found it.
func (s *fileSource) countLines(cancelled func() bool) (int, error) {
	defer s.rewind()
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	buf := make([]byte, 1<<20)
	lines, last := 0, byte('\n')
	for !cancelled() {
		n, err := s.f.Read(buf)
		lines += bytes.Count(buf[:n], []byte{'\n'})
		if n > 0 {
			last = buf[n-1]
		}
		if errors.Is(err, io.EOF) {
			if last != '\n' {
				lines++
			}
			return lines, nil
		}
		if err != nil {
			return 0, fmt.Errorf("simulator: %s: %w", s.path, err)
		}
	}
	return 0, errCancelledReading
}

var errCancelledReading = errors.New("simulator: cancelled while reading the trace")

func (s *fileSource) close() {
	s.names.free()
	s.f.Close()
}

// copyCError writes msg, cut to fit and NUL-terminated, into a C buffer.
func copyCError(buf *C.char, capacity C.size_t, msg string) {
	if buf == nil || capacity == 0 {
		return
	}
	out := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(capacity))
	n := copy(out[:len(out)-1], msg)
	out[n] = 0
}
