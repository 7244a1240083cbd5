package build

import (
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A script build's output and what it says of the TensorRT builds inside
// it. The hook does not see TensorRT's log: the program's logger gets it
// (TensorRT keeps one logger per process, the one the program gave
// it), and an error recorder set by the hook would take the errors away
// from that logger ("If an error recorder is not set, messages will be
// sent to the global log stream", NvInfer.h), so either would change what
// the program prints. The supervisor instead reads the error-severity log
// lines the program prints (outputError). The newest one printed since the
// previous TensorRT build of the command ended is the last library error
// of the build that ends next, which its reason carries when it fails, as
// a matrix build's does (failureReason); unless another TensorRT build
// ran beside it (a pool of processes), when a line cannot be told to
// belong to either.
//
// The output pipe and the hook's socket are read apart, so a failed
// build's end can arrive before the error line its process printed just
// before it, and its begin after a line it printed. The supervisor
// therefore reads the output up to what the command had written
// (outputPipe.written) before it acts on such an end (script.catchUp),
// and does not ask that the line came after the begin.

// outputCatchUp bounds how long catchUp waits for the rest of a line the
// command has begun and not ended.
const outputCatchUp = 100 * time.Millisecond

// outputLine is one line of the command's output as the views show it,
// and the offset in the output just past it.
type outputLine struct {
	text string
	end  int64
}

// outputPipe is the read end of the command's output pipe. It counts
// what it has read under the lock that written takes, so that read plus
// what waits in the pipe is how much the command had written at one
// moment.
type outputPipe struct {
	f    *os.File
	conn syscall.RawConn
	mu   sync.Mutex
	read int64 // bytes read from the pipe
}

func newOutputPipe(f *os.File) (*outputPipe, error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &outputPipe{f: f, conn: conn}, nil
}

// Read reads what the pipe holds, waiting (in Go's poller) until it
// holds something; io.EOF once every writer has closed it.
func (p *outputPipe) Read(b []byte) (int, error) {
	var n int
	var err error
	cerr := p.conn.Read(func(fd uintptr) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for {
			n, err = unix.Read(int(fd), b)
			if err != unix.EINTR {
				break
			}
		}
		if n > 0 {
			p.read += int64(n)
		}
		return err != unix.EAGAIN
	})
	switch {
	case cerr != nil: // closed
		return 0, cerr
	case err != nil:
		return 0, err
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// written is how far into the output the command had written: what was
// read, and what waits in the pipe (FIONREAD).
func (p *outputPipe) written() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	pending := 0
	// FIONREAD, which golang.org/x/sys/unix calls TIOCINQ on Linux.
	_ = p.conn.Control(func(fd uintptr) { pending, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	return p.read + int64(pending)
}

func (p *outputPipe) Close() error { return p.f.Close() }

// catchUp handles the command's output up to where it had written when
// called, so that what a process printed before it sent a hook message
// is read before that message is acted on. A line the command has begun
// and not ended is waited for outputCatchUp at most.
func (s *script) catchUp(lines *<-chan outputLine) {
	if *lines == nil || s.out == nil {
		return
	}
	target := s.out.written()
	if s.outHandled >= target {
		return
	}
	timeout := time.NewTimer(outputCatchUp)
	defer timeout.Stop()
	for s.outHandled < target {
		select {
		case l, ok := <-*lines:
			if !ok {
				*lines = nil
				return
			}
			s.handleOutput(l)
		case <-timeout.C:
			return
		}
	}
}

// noteLibraryError keeps an error-severity TensorRT log line the command
// printed, for the TensorRT build that ends next (libraryError).
func (s *script) noteLibraryError(line string) {
	if msg := outputError(line); msg != "" {
		s.lastError = msg
	}
}

// libraryError is the last library error of in, which is ending: the
// newest error line printed since the TensorRT build before it ended,
// unless another ran beside it. The next build starts afresh.
func (s *script) libraryError(in *innerBuild) string {
	msg := s.lastError
	s.lastError = ""
	if in.beside {
		return ""
	}
	return msg
}

// noteBeside marks in, which begins, and every TensorRT build running
// beside it as not alone: what they print cannot be told apart.
func (s *script) noteBeside(in *innerBuild) {
	for _, other := range s.running() {
		if other != in {
			other.beside, in.beside = true, true
		}
	}
}

// bindingsLogLine is a line the Python bindings' own logger (trt.Logger,
// which most programs use) prints: "[MM/DD/YYYY-HH:MM:SS] [TRT] [E] msg",
// its severity F (internal error), E, W, I or V (DefaultLogger in
// python/src/infer/pyCore.cpp, https://github.com/NVIDIA/TensorRT).
var bindingsLogLine = regexp.MustCompile(`^\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] \[TRT\] \[([FEWIV])\] (.*)$`)

// errorReport is how TensorRT words an error it reports, whatever logger
// prints it: "IBuilder::buildSerializedNetwork: Error Code 4: API Usage
// Error (...)"; Polygraphy's logger, for one, prints it as "[E] " and the
// message.
var errorReport = regexp.MustCompile(`\bError Code \d+: `)

// outputError is TensorRT's message in a line of output that is one of
// its error-severity log lines, or "": the message of the bindings'
// logger's error and internal-error lines, else a line that holds an
// error TensorRT reported, whole.
//
// Every line a command prints comes here: a substring each pattern needs
// turns the other lines away before a regexp runs.
func outputError(line string) string {
	if strings.Contains(line, "] [TRT] [") {
		if m := bindingsLogLine.FindStringSubmatch(line); m != nil {
			if m[1] == "E" || m[1] == "F" {
				return strings.TrimSpace(m[2])
			}
			return ""
		}
	}
	if strings.Contains(line, "Error Code ") && errorReport.MatchString(line) {
		return strings.TrimSpace(line)
	}
	return ""
}

// endsUnsuccessfully reports whether p ends a TensorRT build that
// returned no engine: one whose reason may be a line its process printed.
func (p hookPacket) endsUnsuccessfully() bool {
	return !p.closed && p.msg.M == hookEnd && p.msg.Result != hookResultOK
}
