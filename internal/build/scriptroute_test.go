package build

import (
	"slices"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/pyhook"
	"github.com/trt-action/trt-action/internal/report"
)

// A TensorRT build that fell back to the Python route because trt-action
// found no native libraries says what was not found and where trt-action
// looked, in its route_note; the script build warns of it once, in its
// report entry and its log, however many of its TensorRT builds fell
// back. A command whose environment asks for the Python route gets no
// warning. (The fake hook sends route python and no note, as the real
// one does when TRT_ACTION_NATIVE_DIR is not set.)
func TestAFallBackToThePythonRouteSaysWhyOnce(t *testing.T) {
	const missing = "no libtam_host.so, which builder scripts need for the native monitor, was found (looked beside the binary in /opt/x/lib)"
	opts := scriptOptions(t)
	opts.NativeMissing = missing
	got, events := runScripts(t, opts,
		scriptBuild(t, "fell-back", "two", nil),
		scriptBuild(t, "asked", "two", func(b *matrix.Build) {
			b.Script.Env = append(b.Script.Env, pyhook.EnvRoute+"="+pyhook.RoutePython)
		}))
	b := got["fell-back"]
	if len(b.TensorRTBuilds) != 2 {
		t.Fatalf("fell-back: %d TensorRT builds", len(b.TensorRTBuilds))
	}
	for _, in := range b.TensorRTBuilds {
		if in.Route != pyhook.RoutePython || in.RouteNote != missing {
			t.Errorf("TensorRT build %d: route %s, note %q; want the supervisor's reason", in.Index, in.Route, in.RouteNote)
		}
	}
	warned := slices.DeleteFunc(slices.Clone(b.Warnings), func(w string) bool { return !strings.Contains(w, "Python route") })
	want := "TensorRT build 1 took the Python route (Python runs at each of its callbacks), not the native one: " + missing
	if !slices.Equal(warned, []string{want}) {
		t.Errorf("fell-back's warnings about the route = %q, want once %q", warned, want)
	}
	shown := 0
	for _, ev := range events {
		if ev.Kind == event.Warning && ev.Name == "fell-back" && ev.Message == want {
			shown++
		}
	}
	if shown != 1 {
		t.Errorf("the log showed the route warning %d times, want once", shown)
	}
	if w := got["asked"].Warnings; slices.ContainsFunc(w, func(s string) bool { return strings.Contains(s, "Python route") }) {
		t.Errorf("a command that asked for the Python route was warned: %q", w)
	}
}

// With native libraries found, a hook that still had no folder named
// (the program gave a process an environment of its own) is explained as
// that.
func TestARouteNoteWhenTheProcessLostTheNativeFolder(t *testing.T) {
	opts := scriptOptions(t)
	opts.NativeDir = t.TempDir()
	got, _ := runScripts(t, opts, scriptBuild(t, "lost", "ok", nil))
	in := got["lost"].TensorRTBuilds
	if len(in) != 1 || !strings.HasPrefix(in[0].RouteNote, pyhook.EnvNativeDir+", which trt-action sets for the command, was not in this process's environment") {
		t.Errorf("TensorRT builds: %+v", in)
	}
	if in[0].Status != report.StatusOK {
		t.Errorf("status %s", in[0].Status)
	}
}
