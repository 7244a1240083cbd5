package logview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// The log's result line of a build with memory figures has its peak; one
// the OOM killer ended says so, in its line and its annotation.
func TestLogLinesWithMemoryGolden(t *testing.T) {
	var plain bytes.Buffer
	if err := play(NewPlainView(&plain, PlainOptions{}), runScript(reporttest.Memory(), false)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "plain-memory.golden", plain.String())
	for _, want := range []string{
		"[resnet-fp16] ✔ ok in 20.0s · peak 1.8 GB · GPU 2.1 GB — engine",
		"[llama-7b] ✖ crashed after 1m35s · peak 31.2 GB: out of host memory (peak 31.2 GB of 32.0 GB)",
	} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("no %q in\n%s", want, plain.String())
		}
	}
	var actions bytes.Buffer
	fence := testFence(t)
	if err := play(NewActionsView(&actions, fence, ActionsOptions{Jobs: 1, File: "matrix.yaml"}), runScript(reporttest.Memory(), false)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "actions-memory.golden", actions.String())
	if !strings.Contains(actions.String(), "pid 4711 · peak 3.1 GB: phase") {
		t.Errorf("the annotation does not give the TensorRT build's peak:\n%s", actions.String())
	}
	if !strings.Contains(actions.String(), "title=trt-action%3A llama-7b crashed::llama-7b: crashed after 1m35s: out of host memory (peak 31.2 GB of 32.0 GB).") {
		t.Errorf("no annotation naming the OOM kill in\n%s", actions.String())
	}
}
