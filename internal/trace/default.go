package trace

import (
	"bytes"
	_ "embed"
	"sync"
)

// default.jsonl is ConvertANSI applied to a real recording of a TensorRT 10.16
// MNIST build as NVIDIA's sample progress monitor drew it (Apache-2.0, from
// NVIDIA's trt-samples-for-hackathon-cn, cookbook/04-Feature/ProgressMonitor/
// log-main.py.log; kept in the shared traces directory beside the project,
// not in this repository). It is generated; the test
// TestDefaultMatchesRecording fails when it drifts from the converter.
//
//go:generate go test -run=TestDefaultMatchesRecording -update .
//go:embed default.jsonl
var defaultJSONL []byte

var parseDefault = sync.OnceValue(func() []Event {
	events, err := Read(bytes.NewReader(defaultJSONL), "default.jsonl")
	if err != nil {
		panic("trace: embedded default.jsonl is corrupt: " + err.Error()) // caught by the package tests
	}
	return events
})

// Default returns the built-in trace: the 6,439 callbacks of a real
// TensorRT 10.16 MNIST build, without timings (every T is 0) on thread 1.
// Each call returns a fresh copy the caller may modify.
func Default() []Event {
	events := parseDefault()
	return append(make([]Event, 0, len(events)), events...)
}
