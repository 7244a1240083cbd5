package logview

import (
	"fmt"
	"testing"

	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// A settled build (its trees in the report's spool) annotates and prints
// its result line exactly as the whole build does.
func TestSettledBuildsAnnotateAndPrintAsWhole(t *testing.T) {
	const n = 400
	whole, settled := reporttest.Mixed(n), reporttest.Settled(n)
	if w, s := fmt.Sprint(runNotes(whole, nil, "m.yml")), fmt.Sprint(runNotes(settled, nil, "m.yml")); w != s {
		t.Errorf("annotations differ with settled builds:\n whole   %s\n settled %s", w, s)
	}
	for i := range whole.Builds {
		if w, s := resultText(&whole.Builds[i]), resultText(&settled.Builds[i]); w != s {
			t.Errorf("build %d: result line %q with settled builds, %q whole", i, s, w)
		}
	}
}
