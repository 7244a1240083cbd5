package trace

import (
	"bytes"
	"os"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
)

// TestDefaultMatchesRecording keeps the embedded default equal to what the
// converter makes of the recording; -update rewrites it (go generate does).
func TestDefaultMatchesRecording(t *testing.T) {
	data := readRecording(t)
	events, err := ConvertANSI(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte(writeAll(t, events))
	if golden.Updating() { // -update regenerates default.jsonl from the shared recording
		if err := os.WriteFile("default.jsonl", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(defaultJSONL, want) {
		t.Errorf("default.jsonl (%d bytes) differs from converting %s (%d bytes); run go generate ./internal/trace",
			len(defaultJSONL), recording, len(want))
	}
}

func TestDefault(t *testing.T) {
	events := Default()
	if err := Validate(events); err != nil {
		t.Fatalf("default trace breaks the contract: %v", err)
	}
	if len(events) != 6439 {
		t.Errorf("Default has %d events, want 6439", len(events))
	}
	checkRecordedTree(t, events)
	if len(defaultJSONL) > 1500*1000 {
		t.Errorf("default.jsonl is %d bytes; embed it gzipped", len(defaultJSONL))
	}
}

func TestDefaultReturnsCopies(t *testing.T) {
	a := Default()
	a[0].Phase = "changed"
	if b := Default(); b[0].Phase != "Building engine" {
		t.Errorf("a caller's change leaked into Default: %q", b[0].Phase)
	}
}
