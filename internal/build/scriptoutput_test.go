package build

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
)

// TensorRT's error lines are found whatever logger printed them: the
// bindings' own (its error and internal-error lines, not its warnings),
// or any that prints the error TensorRT reported (Polygraphy's).
func TestOutputErrorFindsTensorRTsErrorLines(t *testing.T) {
	const msg = "IBuilder::buildSerializedNetwork: Error Code 1: Cuda Runtime (In generateForCurrent at /_src/runtime/core/cudaDeviceProfile.cpp:221 (cudaError 35: CUDA driver version is insufficient for CUDA runtime version))"
	for line, want := range map[string]string{
		"[12/03/2026-14:44:38] [TRT] [E] " + msg:                msg,
		"[12/03/2026-14:44:38] [TRT] [F] Assertion failed: x ":  "Assertion failed: x",
		"[12/03/2026-14:44:38] [TRT] [W] Error Code 9: not one": "", // a warning, whatever its words
		"[12/03/2026-14:44:38] [TRT] [I] [MemUsageChange] Init": "",
		"[E] " + msg:                         "[E] " + msg, // Polygraphy's logger
		"ERROR: the program's own words":     "",
		"[TRT] [E] a line of another format": "",
		"build returned None":                "",
		"":                                   "",
	} {
		if got := outputError(line); got != want {
			t.Errorf("outputError(%q) = %q, want %q", line, got, want)
		}
	}
}

// What a process printed before its build ended is read before the end
// is acted on: catchUp reads the output up to where the command had
// written, whatever the reader had got to, and the error line goes to
// the one TensorRT build running. A line not ended is waited for a while
// only.
func TestCatchUpReadsWhatWasPrintedBeforeAnEnd(t *testing.T) {
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close()
	out, err := newOutputPipe(r)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan event.Event, 16)
	s := newScript(&watch{r: &runner{events: events}})
	s.out = out
	const errorLine = "[12/03/2026-14:44:38] [TRT] [E] IBuilder::buildSerializedNetwork: Error Code 4: API Usage Error (Network must have at least one output)"
	if _, err := wr.WriteString("starting\n" + errorLine + "\n"); err != nil {
		t.Fatal(err)
	}
	// The reader starts only now: the lines are in the pipe, not yet read.
	lines := make(chan outputLine, 64)
	go readLines(out, lines)
	var got <-chan outputLine = lines
	s.catchUp(&got)
	if s.lastError != "IBuilder::buildSerializedNetwork: Error Code 4: API Usage Error (Network must have at least one output)" {
		t.Errorf("the last error = %q; the line the process printed first was not read", s.lastError)
	}
	if s.outHandled != int64(len("starting\n"+errorLine+"\n")) || s.output.total != 2 {
		t.Errorf("handled %d bytes, %d lines", s.outHandled, s.output.total)
	}

	// A line begun and not ended: waited for outputCatchUp, not for ever.
	if _, err := wr.WriteString("no newline yet"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.catchUp(&got)
	if took := time.Since(start); took < outputCatchUp || took > 5*outputCatchUp {
		t.Errorf("catchUp took %s with a line not ended, want about %s", took, outputCatchUp)
	}
	if _, err := wr.WriteString(" and now\n"); err != nil {
		t.Fatal(err)
	}
	s.catchUp(&got)
	if last := s.output.lines[len(s.output.lines)-1]; !strings.HasPrefix(last, "no newline yet and now") {
		t.Errorf("last line %q", last)
	}
}

// An error line is the last error of the TensorRT build that ends next,
// also when it was read before that build's begin (the two come on
// different channels), and of no other; with two TensorRT builds running
// beside each other (a pool of processes), it cannot be told to belong
// to either and goes to neither.
func TestAnErrorLineGoesToTheBuildThatEndsNext(t *testing.T) {
	s := newScript(&watch{r: &runner{events: make(chan event.Event, 4)}})
	begin := func() *innerBuild {
		in := &innerBuild{state: newState()}
		s.order = append(s.order, in)
		s.noteBeside(in)
		return in
	}
	end := func(in *innerBuild) string {
		in.done = true
		return s.libraryError(in)
	}
	const line = "[12/03/2026-14:44:38] [TRT] [E] IBuilder::buildSerializedNetwork: Error Code 2: Internal Error (x)"
	const msg = "IBuilder::buildSerializedNetwork: Error Code 2: Internal Error (x)"
	s.noteLibraryError(line) // read before the begin of the build that printed it
	a := begin()
	if got := end(a); got != msg {
		t.Errorf("a: %q, want %q", got, msg)
	}
	b := begin()
	if got := end(b); got != "" {
		t.Errorf("b, after a's error was taken: %q", got)
	}
	c, d := begin(), begin()
	s.noteLibraryError(line)
	if got := end(c); got != "" {
		t.Errorf("c, beside d: %q", got)
	}
	if got := end(d); got != "" {
		t.Errorf("d, beside c: %q", got)
	}
	s.noteLibraryError("[12/03/2026-14:44:38] [TRT] [W] a warning")
	if got := end(begin()); got != "" {
		t.Errorf("after a warning: %q", got)
	}
}

// A failed TensorRT build's reason is TensorRT's last error line, which
// its process printed just before the build ended, as a matrix build's
// reason is its library's; the script build's reason carries it on.
func TestAFailedTensorRTBuildSaysTensorRTsError(t *testing.T) {
	const msg = "IBuilder::buildSerializedNetwork: Error Code 4: API Usage Error (Network must have at least one output)"
	got, _ := runScripts(t, scriptOptions(t), scriptBuild(t, "error-line", "error-line", nil))
	b := got["error-line"]
	if len(b.TensorRTBuilds) != 1 || b.TensorRTBuilds[0].Reason != msg {
		t.Fatalf("TensorRT builds %+v; want the reason %q", b.TensorRTBuilds, msg)
	}
	if !strings.Contains(b.Reason, "TensorRT build 1 failed: "+msg) {
		t.Errorf("the script build's reason %q does not carry TensorRT's error", b.Reason)
	}
}
