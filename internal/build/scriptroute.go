package build

import (
	"cmp"
	"fmt"

	"github.com/trt-action/trt-action/internal/pyhook"
)

// How a TensorRT build's callbacks reach trt-action (its route, as the
// hook reports it), and what the supervisor adds to it: why the build
// took its route when the hook cannot say (trt-action gave it no folder
// of native libraries, so only the supervisor knows what it did not find
// and where it looked), and one warning per script build whose TensorRT
// builds fell back to the Python route without being asked to.

// routeNote is why a TensorRT build took its route: the hook's words, or
// the supervisor's when the hook had none, which it has only when
// TRT_ACTION_NATIVE_DIR was not in the process's environment.
func (s *script) routeNote(m hookMsg) string {
	if m.RouteNote != "" || m.Route != pyhook.RoutePython {
		return m.RouteNote
	}
	if opts := s.w.r.opts; opts.NativeDir == "" {
		return cmp.Or(opts.NativeMissing, "trt-action found no folder of native libraries")
	}
	return pyhook.EnvNativeDir + ", which trt-action sets for the command, was not in this process's environment " +
		"(the program started it with an environment of its own)"
}

// warnRoute warns, once per script build, when a TensorRT build took the
// Python route although the command's environment did not ask for it
// (TRT_ACTION_ROUTE=python): the fallback costs Python at every callback,
// and its reason is something the user can act on. Later TensorRT builds
// say theirs in the report only.
func (s *script) warnRoute(in *innerBuild) {
	if in.rep.Route != pyhook.RoutePython || s.routeAsked || s.routeWarned {
		return
	}
	s.routeWarned = true
	s.w.warn(fmt.Sprintf("TensorRT build %d took the Python route (Python runs at each of its callbacks), not the native one: %s",
		in.rep.Index, in.rep.RouteNote))
}
