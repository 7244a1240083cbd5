package jsonl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

func TestRunFinishedSaysWhyTheRunEndedAndWhatRegressed(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Depth: 2})
	v.Handle(event.Event{Kind: event.RunFinished, Build: -1, Run: &report.Report{
		Complete: true, Ended: "run budget 3s exceeded", Regressions: []report.Regression{{Name: "a", Percent: 40}},
		Builds: []report.Build{{Name: "a", Status: report.StatusOK}}}})
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, `"ended":"run budget 3s exceeded","regressions":["a"]`) {
		t.Errorf("run_finished: %s", got)
	}
}
