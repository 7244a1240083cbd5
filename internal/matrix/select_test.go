package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func loadValid(t *testing.T) *File {
	t.Helper()
	f, err := Load("testdata/valid-plan.yml")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSelect(t *testing.T) {
	f := loadValid(t)
	tests := []struct {
		only []string
		want string
	}{
		{nil, "resnet-fp16-b1 resnet-fp16-b8 resnet-fp32-b1 resnet-fp16-b32 rtx-fp16 rtx-fp32 sim-silence"},
		{[]string{"rtx-fp32"}, "rtx-fp32"},
		{[]string{"resnet-*-b1", "sim-silence"}, "resnet-fp16-b1 resnet-fp32-b1 sim-silence"},
		// File order, each build once, whatever the order of patterns.
		{[]string{"sim-*", "*fp16*"}, "resnet-fp16-b1 resnet-fp16-b8 resnet-fp16-b32 rtx-fp16 sim-silence"},
	}
	for _, tt := range tests {
		got, err := f.Select(tt.only)
		if err != nil {
			t.Errorf("Select(%q): %v", tt.only, err)
			continue
		}
		var names []string
		for _, b := range got {
			names = append(names, b.Name)
		}
		if s := strings.Join(names, " "); s != tt.want {
			t.Errorf("Select(%q) = %s, want %s", tt.only, s, tt.want)
		}
	}
}

func TestSelectUnknown(t *testing.T) {
	f := loadValid(t)
	_, err := f.Select([]string{"rtx-fp61", "nothing*"})
	want := `testdata/valid-plan.yml: no build matches "rtx-fp61" (did you mean "rtx-fp16"?), "nothing*"; builds: resnet-fp16-b1, resnet-fp16-b8, resnet-fp32-b1, resnet-fp16-b32, rtx-fp16, rtx-fp32, sim-silence`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if _, err := f.Select([]string{"["}); err == nil {
		t.Error("bad glob accepted")
	}
}

func TestSelectListsAtMostTenNames(t *testing.T) {
	f := &File{Path: "f.yml"}
	for i := range 25 {
		f.Builds = append(f.Builds, Build{Name: "b" + string(rune('a'+i))})
	}
	_, err := f.Select([]string{"zzz"})
	if err == nil || !strings.HasSuffix(err.Error(), "bj and 15 more") {
		t.Errorf("got %v", err)
	}
}

func TestPlanJSON(t *testing.T) {
	f := loadValid(t)
	var a bytes.Buffer
	if err := PlanJSON(&a, f.Builds, nil, ""); err != nil {
		t.Fatal(err)
	}
	var plan []struct {
		Name    string `json:"name"`
		Engine  string `json:"engine"`
		Budgets struct {
			Build  string `json:"build"`
			Grace  string `json:"grace"`
			Phases []struct{ Pattern, Limit string }
		} `json:"budgets"`
		Settings struct {
			Shapes      map[string]struct{ Opt []int64 } `json:"shapes"`
			MemoryPools map[string]int64                 `json:"memory-pools"`
		} `json:"settings"`
		Sim *struct {
			Fault         string `json:"fault"`
			FaultDuration string `json:"fault_duration"`
		} `json:"sim"`
		Axes map[string]string `json:"axes"`
		Pos  string            `json:"pos"`
	}
	if err := json.Unmarshal(a.Bytes(), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan) != 7 {
		t.Fatalf("%d builds, want 7", len(plan))
	}
	b8 := plan[1]
	if b8.Name != "resnet-fp16-b8" || b8.Engine != "testdata/out/resnet-fp16-b8.engine" ||
		b8.Budgets.Build != "20m0s" || b8.Budgets.Grace != "30s" || len(b8.Budgets.Phases) != 3 ||
		b8.Settings.Shapes["input"].Opt[0] != 8 || b8.Settings.MemoryPools["workspace"] != 2<<30 || b8.Axes["batch"] != "8" || b8.Pos != "testdata/valid-plan.yml:10:5" || b8.Sim != nil {
		t.Errorf("resnet-fp16-b8 = %+v", b8)
	}
	if s := plan[6].Sim; s == nil || s.Fault != "silence" || s.FaultDuration != "5s" {
		t.Errorf("sim-silence sim = %+v", s)
	}
}

// TestPlanJSONExactLine pins one build's line byte for byte: the field
// order, map keys sorted (so equal plans give equal bytes), zero limits
// left out, and & and < kept as they are in paths.
func TestPlanJSONExactLine(t *testing.T) {
	b := Build{
		Name: "n", Backend: "tensorrt", Engine: "out/a&b<c>.engine",
		Budgets: Budgets{Build: 15 * time.Minute, Grace: 30 * time.Second},
		Axes:    map[string]string{"z": "1", "a": "2", "m": "3"},
		Pos:     Pos{File: "m.yml", Line: 3, Column: 5},
	}
	want := "[\n" +
		`{"name":"n","backend":"tensorrt","engine":"out/a&b<c>.engine","budgets":{"build":"15m0s","grace":"30s"},"axes":{"a":"2","m":"3","z":"1"},"pos":"m.yml:3:5"}` +
		"\n]\n"
	var buf bytes.Buffer
	if err := PlanJSON(&buf, []Build{b}, nil, ""); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != want {
		t.Errorf("PlanJSON =\n%s\nwant\n%s", got, want)
	}
}

func TestPlanTextEscapesControlCharacters(t *testing.T) {
	var buf bytes.Buffer
	PlanText(&buf, []Build{{Name: "a", Backend: "sim", Engine: "x\x1b[2J\n::error::y.engine"}})
	out := buf.String()
	if strings.ContainsAny(out, "\x1b") || strings.Contains(out, "\n::") {
		t.Errorf("control characters reached the table:\n%q", out)
	}
	// The row must still be there, the engine quoted Go-style on one line.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{"a", "sim", `x\x1b[2J\n::error::y.engine`, "-", "-"}
	if len(lines) != 3 || strings.Join(strings.Fields(lines[1]), " ") != strings.Join(want, " ") || lines[2] != "1 build" {
		t.Errorf("PlanText = %q, want a header, the row %q and \"1 build\"", out, want)
	}
}

// TestPlanJSONLayout pins the layout: an array with one build per line.
func TestPlanJSONLayout(t *testing.T) {
	f := loadValid(t)
	tests := []struct {
		builds []Build
		lines  int
	}{{nil, 1}, {f.Builds[:1], 3}, {f.Builds, 9}}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := PlanJSON(&buf, tt.builds, nil, ""); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if n := strings.Count(out, "\n"); n != tt.lines {
			t.Errorf("%d builds: %d lines, want %d:\n%s", len(tt.builds), n, tt.lines, out)
		}
		var v []map[string]any
		if err := json.Unmarshal(buf.Bytes(), &v); err != nil || len(v) != len(tt.builds) {
			t.Errorf("%d builds: not a JSON array of them: %v\n%s", len(tt.builds), err, out)
		}
	}
	var buf bytes.Buffer
	PlanJSON(&buf, nil, nil, "")
	if buf.String() != "[]\n" {
		t.Errorf("no builds: %q", buf.String())
	}
}

func TestErrorsStayOnOneLine(t *testing.T) {
	src := "version: 1\nbuilds:\n  - name: a\n    backend: sim\n    onnx: \"x\\n::error::forged\"\n"
	_, err := parseContent("t.yml", []byte(src))
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %q", err)
	}
}

func TestPlanTextEscapesBidiAndC1Controls(t *testing.T) {
	var buf bytes.Buffer
	PlanText(&buf, []Build{{Name: "a", Backend: "sim", Engine: "x\u202egnp.engine\u009b2J"}})
	if out := buf.String(); !strings.Contains(out, `x\u202egnp.engine\u009b2J`) {
		t.Errorf("PlanText = %q, want the controls as escapes", out)
	}
}

func TestSelectErrorStaysShortForAHugeOnly(t *testing.T) {
	f := loadValid(t)
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("nope-%d", i)
	}
	for name, only := range map[string][]string{
		"one huge pattern":  {strings.Repeat("x", 1<<20)},
		"a huge bad glob":   {"[" + strings.Repeat("x", 1<<20)},
		"thousands of them": many,
	} {
		_, err := f.Select(only)
		if err == nil {
			t.Fatalf("%s: selected something", name)
		}
		if n := len(err.Error()); n > 2000 {
			t.Errorf("%s: error of %d bytes echoes the input: %.300s…", name, n, err)
		}
	}
	_, err := f.Select(many)
	if !strings.Contains(err.Error(), `"nope-9" and 4990 more; builds:`) {
		t.Errorf("the error must say how many patterns it left out: %.400s", err)
	}
}

// With keys, each line has its build's engine cache key, or null and why.
func TestPlanJSONKeys(t *testing.T) {
	builds := []Build{{Name: "a", Backend: "sim"}, {Name: "b", Backend: "tensorrt"}}
	keys := func(b Build) (string, string) {
		if b.Name == "a" {
			return "ab12", ""
		}
		return "", "the GPU is not known"
	}
	var buf bytes.Buffer
	if err := PlanJSON(&buf, builds, keys, ""); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.HasSuffix(lines[1], `"cache_key":"ab12"},`) || !strings.HasSuffix(lines[2], `"cache_key":null,"cache_key_unknown":"the GPU is not known"}`) {
		t.Errorf("PlanJSON with keys:\n%s", buf.String())
	}
}
