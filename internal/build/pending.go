package build

import (
	"strings"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// pendingBuild is a build's report entry before it starts: what it is, how
// it will be built (its settings), and what its trtexec line held that the
// build does not use: inference-only flags, and flags trtexec deprecated
// or removed.
func pendingBuild(b matrix.Build) report.Build {
	out := report.Build{Name: b.Name, Backend: b.Backend, Axes: b.Axes, Status: report.StatusPending}
	if applied := b.BuilderSettings(); applied != nil {
		out.Settings = &report.Settings{Applied: applied}
	}
	if len(b.TrtexecIgnored) > 0 {
		out.Warnings = []string{"trtexec flags ignored (they only matter when trtexec runs the engine): " +
			strings.Join(b.TrtexecIgnored, " ")}
	}
	for _, w := range b.TrtexecWarnings {
		out.Warnings = append(out.Warnings, "trtexec "+w)
	}
	return out
}
