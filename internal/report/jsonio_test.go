package report

import (
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
	path := filepath.Join(t.TempDir(), "missing-dir", "report.json")
	if err := WriteJSON(path, sampleReport()); err == nil {
		t.Fatal("WriteJSON into a missing directory succeeded")
	}
}

func TestReadJSONErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, body, want string }{
		{"syntax.json", "{\n  \"version\": 1,\n  \"builds\": [}\n", "syntax.json:3:14: "},
		{"type.json", "{\"version\": \"one\"}", "type.json:1:"},
		{"newer.json", "{\"version\": 99}", "report version 99 is newer than this tool reads (up to 1)"},
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
