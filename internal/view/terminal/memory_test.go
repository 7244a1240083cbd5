package terminal

import (
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// The final table's peak memory column (GPU beside host), left out
// first where the width is short.
func TestRenderFinalMemoryGolden(t *testing.T) {
	wide := frame(renderFinal(reporttest.Memory(), 160, false))
	checkGolden(t, "render_final_memory", wide)
	if !strings.Contains(wide, "31.2 GB") || !strings.Contains(wide, "1.8 GB · GPU 2.1 GB") {
		t.Errorf("no peaks:\n%s", wide)
	}
	if narrow := frame(renderFinal(reporttest.Memory(), 60, false)); strings.Contains(narrow, "peak memory") {
		t.Errorf("a 60-column table kept the memory column:\n%s", narrow)
	}
}

// A narrow line drops the GPU and the peak before the current memory.
func TestMemorySegsDropPeakFirst(t *testing.T) {
	segs := memorySegs(&event.MemoryUse{Host: 3e9, PeakHost: 4e9, GPU: 1e9, HasGPU: true})
	if len(segs) != 3 || segs[0].drop >= segs[1].drop || segs[0].drop >= segs[2].drop {
		t.Errorf("segments %+v", segs)
	}
	if memorySegs(nil) != nil {
		t.Error("segments before the first look")
	}
}
