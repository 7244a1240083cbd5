package build

import (
	"strings"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// pendingBuild is a build's report entry before it starts: what it is, how
// it will be built (its settings), and the inference-only flags of its
// trtexec line that it will not use.
func pendingBuild(b matrix.Build) report.Build {
	out := report.Build{Name: b.Name, Backend: b.Backend, Axes: b.Axes, Status: report.StatusPending}
	if applied := b.BuilderSettings(); applied != nil {
		out.Settings = &report.Settings{Applied: applied}
	}
	if len(b.TrtexecIgnored) > 0 {
		out.Warnings = []string{"trtexec flags ignored (they only matter when trtexec runs the engine): " +
			strings.Join(b.TrtexecIgnored, " ")}
	}
	return out
}
