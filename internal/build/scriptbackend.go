package build

import (
	"fmt"

	"github.com/trt-action/trt-action/internal/backend"
)

// A script build's backend is what its build declares (backend:, or
// trt-action run's --backend), not what its program loads: the report
// keeps the declared one, which the user chose and which names the build
// wherever builds are grouped or compared. A program that loads another
// backend's library is warned of, once per script build, so the label is
// never wrong unnoticed.

// warnBackend warns when the library a TensorRT build loaded belongs to
// another backend than the one the build declares; once per script build.
func (s *script) warnBackend(in *innerBuild) {
	loaded, ok := backend.OfLibrary(in.rep.Library)
	declared := s.w.spec.Backend
	if s.backendWarned || !ok || loaded.Name == declared {
		return
	}
	s.backendWarned = true
	s.w.warn(fmt.Sprintf("TensorRT build %d loaded %s, a %s library, but this build is declared %s, which its report keeps: "+
		"declare %s (backend: in a matrix file, --backend for trt-action run)",
		in.rep.Index, in.rep.Library, loaded.Name, declared, loaded.Name))
}
