package outputs

import (
	"errors"
	"strings"
	"testing"
)

// A write that fails and later succeeds leaves the file right: only the
// latest outcome of each output counts.
func TestOutputsKeepTheLatestOutcomeOfEachOutput(t *testing.T) {
	var o Outputs
	full := errors.New("no space left on device")
	o.record("--report", full)
	o.record("--summary", full)
	o.record("--report", nil)
	o.record("--junit", full)
	var names []string
	for _, f := range o.failed {
		names = append(names, f.output)
	}
	if got := strings.Join(names, ","); got != "--summary,--junit" {
		t.Errorf("failed outputs %s, want --summary,--junit", got)
	}
}
