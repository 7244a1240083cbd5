package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	want := sampleReport()
	if err := WriteJSON(path, want); err != nil {
		t.Fatal(err)
	}
	want.Builds[0].Axes = map[string]string{"precision": "fp16"}
	if err := WriteJSON(path, want); err != nil { // replaces the first
		t.Fatal(err)
	}
	got, err := ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back differs:\n got %+v\nwant %+v", got, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the report (temp files left behind?)", len(entries))
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o644 {
		t.Errorf("report mode %v, want 0644", info.Mode().Perm())
	}
}

func TestWriteJSONLeavesOldReportOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := WriteJSON(path, sampleReport()); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// NaN has no JSON form, so encoding fails; the tests run as root, where
	// a read-only directory would not stop the write.
	bad := sampleReport()
	bad.Builds[0].BudgetUse = math.NaN()
	if err := WriteJSON(path, bad); err == nil {
		t.Fatal("WriteJSON of a NaN budget use succeeded")
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, old) {
		t.Errorf("old report changed by a failed write (err %v): now %d bytes, was %d", err, len(got), len(old))
	}
	checkNoTempFiles(t, dir, "report.json")
}

// checkNoTempFiles asserts dir holds no partial file of name.
func checkNoTempFiles(t *testing.T, dir, name string) {
	t.Helper()
	temps, err := filepath.Glob(filepath.Join(dir, name+".partial-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(temps) > 0 {
		t.Errorf("temporary files left behind: %v", temps)
	}
}

func TestReadJSONErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, body, want string }{
		{"syntax.json", "{\n  \"version\": 1,\n  \"builds\": [}\n", "syntax.json:3:14: "},
		{"type.json", "{\"version\": \"one\"}", "type.json:1:"},
		{"newer.json", "{\"version\": 99}", "report version 99 is newer than this tool reads (up to 2)"},
		{"other.json", "{\"name\": \"x\"}", "not a trt-action report"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadJSON(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadJSON(%s) = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// A report written before Report.Signal existed recorded an interrupt in
// words only: reading it gives the signal those words name, so the exit
// code a merge of it decides is the one its run had.
func TestReadJSONGivesAnOlderReportTheSignalItsWordsName(t *testing.T) {
	dir := t.TempDir()
	for words, want := range map[string]string{
		"":                  "",
		"SIGINT after 1.5s": SignalInterrupt,
		"SIGTERM after 3s":  SignalTerminate,
		"shard 2: SIGTERM after 3s; shard 3: SIGINT after 1s": SignalTerminate,
		"stopped": SignalInterrupt, // an interrupt all the same
	} {
		path := filepath.Join(dir, "old.json")
		data := `{"version": 2, "tool": "trt-action 0.1.0", "complete": false, "interrupted": "` + words + `", "builds": []}`
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadJSON(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Signal != want {
			t.Errorf("interrupted %q: signal %q, want %q", words, r.Signal, want)
		}
	}
	// A report that records its signal keeps it.
	r := &Report{Version: SchemaVersion, Interrupted: "SIGINT after 1s", Signal: SignalTerminate}
	path := filepath.Join(dir, "new.json")
	if err := WriteJSON(path, r); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadJSON(path); err != nil || got.Signal != SignalTerminate {
		t.Errorf("signal %q (%v), want the recorded %q", got.Signal, err, SignalTerminate)
	}
}
