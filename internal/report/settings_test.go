package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/settings"
)

func settingsBuild(name string, applied map[string]any) Build {
	b := Build{Name: name, Status: StatusOK}
	if applied != nil {
		b.Settings = &Settings{Library: "TensorRT-RTX 1.7.1.116", Applied: applied}
	}
	return b
}

func TestSettingsTableShowsWhatDiffers(t *testing.T) {
	builds := []Build{
		settingsBuild("cnn-none", map[string]any{"profiling-verbosity": "none", "opt-level": 3, "tactic-sources": []string{"-jit-convolutions"}}),
		settingsBuild("cnn-detailed", map[string]any{"profiling-verbosity": "detailed", "opt-level": 3, "tactic-sources": []string{"-jit-convolutions"},
			"memory-pools": map[string]int64{"workspace": 1 << 30, "tactic-shared": 48 << 10}, "l2-limit-for-tiling": int64(1_500_000),
			"shapes":           map[string]settings.Shape{"x": {Min: []int64{1, 3}, Opt: []int64{4, 3}, Max: []int64{8, 3}}},
			"layer-precisions": []settings.LayerType{{Layer: "*", Type: "fp16"}, {Layer: "conv1", Type: "fp32"}}}),
		settingsBuild("cnn-plain", map[string]any{"opt-level": 3, "tactic-sources": []string{"-jit-convolutions"}}),
	}
	// Sizes exactly in the largest unit that divides them, pools in the
	// table's order, shapes min, opt, max, layer types in the order written.
	want := "\n### Settings that differ\n\n| Build | l2-limit-for-tiling | layer-precisions | memory-pools | profiling-verbosity | shapes |\n" +
		"|---|---|---|---|---|---|\n" +
		"| cnn-none | — | — | — | none | — |\n" +
		"| cnn-detailed | 1500KB | \\*:fp16,conv1:fp32 | workspace=1GiB tactic-shared=48KiB | detailed | x min=1x3 opt=4x3 max=8x3 |\n" +
		"| cnn-plain | — | — | — | — | — |\n"
	if got := settingsTable(builds); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// A report read back from JSON holds []any, float64 and map[string]any:
	// the table must come out the same.
	if got := settingsTable(readBack(t, builds)); got != want {
		t.Errorf("after a JSON round trip got\n%s\nwant\n%s", got, want)
	}
}

// Each optimization profile shows after its index, in order, live and
// read back from JSON.
func TestSettingsTableShowsEachProfile(t *testing.T) {
	shape := func(min, opt, max int64) settings.Shape {
		return settings.Shape{Min: []int64{min, 3}, Opt: []int64{opt, 3}, Max: []int64{max, 3}}
	}
	builds := []Build{
		settingsBuild("two", map[string]any{"profiles": []map[string]settings.Shape{
			{"x": shape(1, 2, 4), "m": {Min: []int64{8}, Opt: []int64{8}, Max: []int64{8}}},
			{"x": shape(4, 8, 16), "m": {Min: []int64{8}, Opt: []int64{8}, Max: []int64{8}}}}}),
		settingsBuild("none", nil),
	}
	// The brackets are escaped for Markdown, which shows them as written.
	want := `| two | \[0\] m min=8 opt=8 max=8; x min=1x3 opt=2x3 max=4x3 \[1\] m min=8 opt=8 max=8; x min=4x3 opt=8x3 max=16x3 |`
	for what, b := range map[string][]Build{"live": builds, "read back": readBack(t, builds)} {
		if got := settingsTable(b); !strings.Contains(got, "| Build | profiles |") || !strings.Contains(got, want) {
			t.Errorf("%s: got\n%s\nwant a row\n%s", what, got, want)
		}
	}
}

func TestSettingsTableEmptyWhenNothingDiffers(t *testing.T) {
	same := map[string]any{"tf32": false}
	for _, builds := range [][]Build{
		nil,
		{settingsBuild("one", same)},
		{settingsBuild("a", same), settingsBuild("b", map[string]any{"tf32": false})},
		{settingsBuild("a", nil), settingsBuild("b", nil)},
	} {
		if got := settingsTable(builds); got != "" {
			t.Errorf("%d builds: got %q, want no table", len(builds), got)
		}
	}
}

// Setting values come from the matrix file: a value that looks like
// Markdown or a mention must not become one in the summary.
func TestSettingsTableEscapesValues(t *testing.T) {
	builds := []Build{
		settingsBuild("a", map[string]any{"plugins": []string{"/p/a|b @octocat <img>.so"}}),
		settingsBuild("b", nil),
	}
	got := settingsTable(builds)
	row := strings.Split(got, "\n")[5]
	if strings.Count(row, "|") != 3+strings.Count(row, `\|`) || strings.Contains(row, "<img>") || strings.Contains(row, " @octocat") {
		t.Errorf("value not escaped: %q", row)
	}
}

func TestSummaryHasTheSettingsTable(t *testing.T) {
	r := &Report{Builds: []Build{
		settingsBuild("a", map[string]any{"refit": "identical"}),
		settingsBuild("b", map[string]any{"refit": "none"}),
	}}
	if got := Summary(r, SummaryOptions{}); !strings.Contains(got, "### Settings that differ") || !strings.Contains(got, "| a | identical |") {
		t.Errorf("summary lacks the settings table:\n%s", got)
	}
}

// valueText writes booleans and numbers itself, and must write them as
// JSON does (how it wrote every one before): a report read back holds
// float64, and a live run int, int64 and bool.
func TestValueTextWritesNumbersAsJSONDoes(t *testing.T) {
	for _, v := range []any{true, false, 0, -7, 3, int64(1 << 40), int64(math.MinInt64), 0.0, math.Copysign(0, -1), 3.0, 0.5, -2.25,
		1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, float64(1 << 53), math.MaxFloat64, math.SmallestNonzeroFloat64} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := valueText(v), string(data); got != want {
			t.Errorf("valueText(%T %v) = %q, want %q", v, v, got, want)
		}
	}
}

// readBack is builds as a report read back from JSON holds them.
func readBack(tb testing.TB, builds []Build) []Build {
	tb.Helper()
	data, err := json.Marshal(builds)
	if err != nil {
		tb.Fatal(err)
	}
	var decoded []Build
	if err := json.Unmarshal(data, &decoded); err != nil {
		tb.Fatal(err)
	}
	return decoded
}

// settingsMatrix is n builds as two matrix axes make them: eight settings
// each, two of which differ from build to build.
func settingsMatrix(n int) []Build {
	builds := make([]Build, n)
	for i := range builds {
		builds[i] = settingsBuild(fmt.Sprintf("b%d", i), map[string]any{
			"opt-level": 3, "tf32": false, "tactic-sources": []string{"-jit-convolutions"},
			"profiling-verbosity": []string{"none", "detailed"}[i%2], "l2-limit-for-tiling": int64(i%7) << 20,
			"memory-pools":     map[string]int64{"workspace": 1 << 30, "tactic-shared": 48 << 10},
			"shapes":           map[string]settings.Shape{"x": {Min: []int64{1, 3}, Opt: []int64{4, 3}, Max: []int64{8, 3}}},
			"layer-precisions": []settings.LayerType{{Layer: "*", Type: "fp16"}, {Layer: "conv1", Type: "fp32"}},
		})
	}
	return builds
}

// The settings table is rendered at every checkpoint (after each build):
// of a live run's values, and of a report read back (merge).
func BenchmarkSettingsTable2k(b *testing.B) {
	live := settingsMatrix(2000)
	for _, c := range []struct {
		name   string
		builds []Build
	}{{"live", live}, {"decoded", readBack(b, live)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				settingsTable(c.builds)
			}
		})
	}
}
