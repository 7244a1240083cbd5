package build

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/trace"
	"github.com/trt-action/trt-action/native"
	"golang.org/x/sys/unix"
)

// drainEvery is how often a worker hands callbacks on. It bounds how late a
// budget is noticed, and costs the build nothing: callbacks only queue.
const drainEvery = 10 * time.Millisecond

// maxBatch bounds the callbacks in one message to the supervisor.
const maxBatch = 4096

// orphanGrace is how long a worker whose supervisor vanished keeps trying to
// stop its build softly before it exits anyway.
const orphanGrace = 3 * time.Second

// RunWorker is the hidden worker subcommand: it reads its spec from stdin,
// runs one build, and reports on proto. Its error is a spec it could not
// read (also reported on proto); how the build went is on proto alone.
func RunWorker(stdin io.Reader, proto io.Writer) error {
	in := bufio.NewReader(stdin)
	line, err := in.ReadBytes('\n')
	var spec workerSpec
	if err == nil {
		err = json.Unmarshal(line, &spec)
	}
	out := newProtoWriter(proto)
	defer out.flush()
	if err != nil {
		err = fmt.Errorf("worker: bad spec: %w", err)
		out.send(resultMessage(native.Failed, err.Error()))
		return err
	}
	b, library, err := startNative(spec)
	if err != nil {
		status := native.Failed
		if errors.Is(err, native.ErrUnavailable) {
			status = native.Unavailable
		}
		out.send(resultMessage(status, err.Error()))
		return nil // the build's outcome went to the supervisor
	}
	defer b.Close()
	// The monitor's clock started just now: the supervisor maps callback
	// times to its own clock from this message.
	out.send(message{M: msgHello, Library: library})
	out.flush()
	go obeySupervisor(in, b)
	release := holdMemory(spec.SimAllocate)
	pump(b, out)
	release()
	return nil
}

// holdMemory touches n bytes of host memory while the build runs (on a
// goroutine of its own: the callbacks are drained meanwhile), as a
// simulated build's stand-in for what a real one holds (sim.allocate),
// and returns what frees it. It maps the memory itself, so freeing gives
// it back to the system at once, as a build's end does, not whenever
// Go's heap would.
func holdMemory(n int64) (release func()) {
	if n <= 0 {
		return func() {}
	}
	mem, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return func() {}
	}
	touched := make(chan struct{})
	go func() {
		defer close(touched)
		for i := 0; i < len(mem); i += os.Getpagesize() {
			mem[i] = 1
		}
	}()
	return func() {
		<-touched
		_ = unix.Munmap(mem)
	}
}

// startNative starts the build and names the library it runs on (for the
// report). Where the library comes from is decided once, here in the
// worker (whose environment and executable a build has), by the one place
// that decides it for the engine cache too (backend.LocateLibrary), and
// the backend is told it with its origin. The backend is resolved once:
// for tensorrt that loads the library to choose between the 10.x and 11.x
// shims.
func startNative(spec workerSpec) (*native.Build, string, error) {
	if backend.Of(spec.Backend).Simulated {
		req := spec.Request
		sim := *req.Sim
		if spec.SimTrace == "" {
			sim.Trace = trace.Default()
		} else {
			sim.TraceFile = spec.SimTrace // read as the replay goes
		}
		req.Sim = &sim
		b, err := native.StartSim(req)
		return b, "", err
	}
	lib := backend.LocateLibrary(backend.Of(spec.Backend), spec.Request.LibPath) // the spec's LibPath is --trt-lib
	so, err := native.ResolveBackend(spec.Backend, lib)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", native.ErrUnavailable, err)
	}
	library := libraryName(spec.Backend, so, lib)
	b, err := native.StartBackend(so, spec.Request.WithLibrary(lib))
	return b, library, err
}

// obeySupervisor turns a stop message into a soft stop. When stdin ends the
// supervisor is gone: stop softly, and exit if that does not work soon.
func obeySupervisor(in *bufio.Reader, b *native.Build) {
	dec := json.NewDecoder(in)
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			b.Cancel()
			time.AfterFunc(orphanGrace, func() { os.Exit(3) })
			return
		}
		if m.M == msgStop {
			b.Cancel()
		}
	}
}

// pump forwards callbacks and log lines until the build ends, then the result.
func pump(b *native.Build, out *protoWriter) {
	tick := time.NewTicker(drainEvery)
	defer tick.Stop()
	var events []trace.Event
	var logs []native.LogLine
	flush := func() int {
		events, logs = b.Drain(events[:0]), b.Logs(logs[:0])
		out.send(message{M: msgEvents, Events: events})
		for batch := range slices.Chunk(logs, maxBatch/16) {
			lines := make([]report.LogLine, len(batch))
			for i, l := range batch {
				lines[i] = report.LogLine{Severity: severityName(l.Severity), Text: l.Text}
			}
			out.send(message{M: msgLogs, Logs: lines})
		}
		out.flush()
		return len(events)
	}
	for {
		select {
		case <-tick.C:
			// While callbacks flood in, hand them on at once rather than
			// let them wait in the queue for the next tick.
			for flush() >= maxBatch {
			}
		case <-b.Done():
			flush()
			res := b.Result()
			m := resultMessage(res.Status, res.Err)
			m.Dropped = b.Stats().Dropped
			out.send(m)
			return
		}
	}
}

// severityName names TensorRT's ILogger severity s (native.LogLine) as
// the report does: kINTERNAL_ERROR (0) and kERROR (1) are both errors.
func severityName(s int) string {
	switch s {
	case 0, 1:
		return report.SeverityError
	case 2:
		return report.SeverityWarning
	case 3:
		return report.SeverityInfo
	}
	return report.SeverityVerbose
}

// libraryName says which TensorRT library a build runs on, for the report:
// "TensorRT-RTX 1.7.1.116". Empty when the backend cannot tell.
func libraryName(name, so string, lib backend.LibraryLocation) string {
	raw, err := native.BackendInfo(so, lib)
	if err != nil {
		return ""
	}
	var info struct{ Library string }
	if json.Unmarshal([]byte(raw), &info) != nil || info.Library == "" {
		return ""
	}
	return backend.Of(name).Product + " " + info.Library
}
