package actions_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/actions/actionstest"
)

// fixedFence has token 000102…0f so outputs are reproducible.
func fixedFence(t testing.TB) actions.Fence {
	t.Helper()
	f, err := actions.NewFence(bytes.NewReader(actions.Seq(16)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFenceMarkers(t *testing.T) {
	f := fixedFence(t)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(f.Token()) {
		t.Fatalf("token %q is not 32 hex digits", f.Token())
	}
	if got, want := f.Start(), "::stop-commands::000102030405060708090a0b0c0d0e0f"; got != want {
		t.Errorf("Start() = %q, want %q", got, want)
	}
	if got, want := f.End(), "::000102030405060708090a0b0c0d0e0f::"; got != want {
		t.Errorf("End() = %q, want %q", got, want)
	}
}

func TestNewFenceFailsOnShortRandom(t *testing.T) {
	if _, err := actions.NewFence(bytes.NewReader(actions.Seq(5))); err == nil {
		t.Fatal("NewFence accepted 5 random bytes")
	}
	if _, err := actions.NewFence(iotest.ErrReader(iotest.ErrTimeout)); err == nil {
		t.Fatal("NewFence ignored a read error")
	}
}

var hostile = []string{
	"::error::x",
	"  ::warning file=a::y",
	"\t::set-output name=a::b",
	"##[error]x",
	"text ##[group]inside",
	"::stop-commands::other",
	"a\n::error::after newline",
	"a\r::error::after carriage return",
	"a\r\n::notice::after crlf",
	"\u00a0::error::after nbsp",
	"\u2028::error::after line separator",
}

func TestWrapKeepsEverythingInsideTheFence(t *testing.T) {
	f := fixedFence(t)
	lines := append(slices.Clone(hostile), f.End(), "x"+f.End(), "::"+f.Token()+" a=b::")
	out := f.Wrap(lines...)
	got := actionstest.RunnerCommands(out)
	want := []string{f.Start(), f.End()}
	if !slices.Equal(got, want) {
		t.Fatalf("runner would execute %q, want only %q\noutput:\n%s", got, want, out)
	}
	if strings.Count(out, "\n") != len(lines)+2+3 { // three hostile lines hold a line break
		t.Errorf("Wrap wrote %d lines for %d inputs:\n%s", strings.Count(out, "\n"), len(lines), out)
	}
}

func TestNeutraliseMakesEachLineInert(t *testing.T) {
	for _, s := range hostile {
		n := actions.Neutralise(s)
		if cmds := actionstest.RunnerCommands(n); len(cmds) > 0 {
			t.Errorf("Neutralise(%q) = %q still runs %q", s, n, cmds)
		}
		if strings.Contains(n, "\r") {
			t.Errorf("Neutralise(%q) kept a carriage return", s)
		}
	}
}

func TestNeutraliseLeavesOrdinaryTextAlone(t *testing.T) {
	for _, s := range []string{"nvinfer1::IBuilder failed", "a: b", "# heading", "[x] ## y", ""} {
		if got := actions.Neutralise(s); got != s {
			t.Errorf("Neutralise(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestSafeTitle(t *testing.T) {
	for in, want := range map[string]string{
		"resnet-fp16 (bs=8)": "resnet-fp16 (bs=8)",
		"::error::x":         "__error__x",
		"a\nb\rc":            "a_b_c",
		"##[error]x %0A":     "__[error]x _0A",
		"модель ✔":           "модель ✔",
		"\x1b[31mred\x1b[0m": "_[31mred_[0m",
	} {
		if got := actions.SafeTitle(in); got != want {
			t.Errorf("safeTitle(%q) = %q, want %q", in, got, want)
		}
	}
	if got := actions.SafeTitle(strings.Repeat("a", 500)); len([]rune(got)) != actions.MaxTitle+1 {
		t.Errorf("safeTitle kept %d runes of 500, want %d", len([]rune(got)), actions.MaxTitle+1)
	}
	if got := actionstest.RunnerCommands(actions.Group("::error::x\n::warning::y") + "\n"); len(got) != 1 || !strings.HasPrefix(got[0], "::group::") {
		t.Errorf("a hostile group title runs %q", got)
	}
}

func TestRunnerCommandsModel(t *testing.T) {
	out := strings.Join([]string{
		"plain",
		"::group::g",
		"::stop-commands::tok",
		"::error::ignored",
		"##[error]ignored",
		"::tok::",
		"  ::warning::runs",
		"x ##[error]runs",
		"::notcommand",
	}, "\n")
	want := []string{"::group::g", "::stop-commands::tok", "::tok::", "  ::warning::runs", "x ##[error]runs", "::notcommand"}
	if got := actionstest.RunnerCommands(out); !slices.Equal(got, want) {
		t.Fatalf("RunnerCommands = %q, want %q", got, want)
	}
}

// FuzzFence: no input, neutralised or fenced, makes the runner execute a
// command that is not ours.
func FuzzFence(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Add("::000102030405060708090a0b0c0d0e0f::\n::error::x")
	fence := fixedFence(f)
	f.Fuzz(func(t *testing.T, s string) {
		if cmds := actionstest.RunnerCommands(actions.Neutralise(s)); len(cmds) > 0 {
			t.Fatalf("Neutralise(%q) runs %q", s, cmds)
		}
		want := []string{fence.Start(), fence.End()}
		if cmds := actionstest.RunnerCommands(fence.Wrap(s, "after")); !slices.Equal(cmds, want) {
			t.Fatalf("Wrap(%q) runs %q", s, cmds)
		}
		ann := actions.Annotation(actions.LevelError, s, s, s, 1)
		if cmds := actionstest.RunnerCommands(ann); len(cmds) != 1 || strings.ContainsAny(ann, "\r\n") {
			t.Fatalf("Annotation(%q) = %q is not one command line", s, ann)
		}
	})
}

func TestInertJSONKeepsTheValueAndRunsNothing(t *testing.T) {
	in := []byte(`{"name":"a##[error]x","path":"##[##["}` + "\n")
	out := actions.InertJSON(in)
	var before, after map[string]string
	if err := json.Unmarshal(in, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &after); err != nil {
		t.Fatalf("not JSON any more: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("value changed: %v -> %v", before, after)
	}
	if cmds := actionstest.RunnerCommands(string(out)); len(cmds) != 0 || bytes.Contains(out, []byte("##[")) {
		t.Errorf("still a command: %q in %s", cmds, out)
	}
}

// The writer says it wrote what it was given (the caller's bytes), and
// the workflow log gets them inert.
func TestInertJSONWriter(t *testing.T) {
	var log bytes.Buffer
	in := []byte(`{"name":"##[error]x"}` + "\n")
	n, err := actions.InertJSONWriter{W: &log}.Write(in)
	if err != nil || n != len(in) || !bytes.Equal(log.Bytes(), actions.InertJSON(in)) {
		t.Errorf("wrote %d of %d (%v): %s", n, len(in), err, log.Bytes())
	}
}
