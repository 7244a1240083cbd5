package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// settledCopy is reporttest.Settled(n), checked to have a spool (so Settle
// had somewhere to put the trees).
func settledCopy(t *testing.T, n int) *Report {
	r := settledReport(n)
	if r.encoded.spool == nil {
		t.Fatal("no spool: cannot make a temporary file")
	}
	return r
}

// Settled builds keep no trees in memory, and nothing a reader sees
// changes: the report's bytes, the summary at every size, the JUnit file,
// the annotations, the progress lines and the phase answers per build.
func TestSettledBuildsRenderAsWhole(t *testing.T) {
	const n = 400
	whole, settled := mixedMatrix(n), settledCopy(t, n)
	for i := range settled.Builds {
		b := &settled.Builds[i]
		isSettled := ended(b)
		if isSettled != (b.digest != nil) || isSettled && (b.PhaseTree != nil || b.Phases != nil || b.SlowestPhases != nil) {
			t.Fatalf("build %d (%s): settled %v, digest %v, tree %d/%d roots", i, b.Status, isSettled, b.digest != nil, len(b.PhaseTree), len(b.Phases))
		}
		for _, inner := range b.TensorRTBuilds {
			if isSettled && (inner.PhaseTree != nil || inner.Phases != nil || inner.SlowestPhases != nil || inner.Settings != nil || inner.Network != nil) {
				t.Fatalf("build %d: its TensorRT build %d keeps its phase tree, settings or network in memory", i, inner.Index)
			}
		}
		if isSettled && b.Script != nil && len(b.Script.OutputTail) > maxOutputLines {
			t.Fatalf("build %d keeps %d lines of output in memory, more than the %d views quote", i, len(b.Script.OutputTail), maxOutputLines)
		}
		if inner := whole.Builds[i].TensorRTBuilds; len(inner) > 0 && len(inner[0].PhaseTree) == 0 {
			t.Fatalf("build %d: the fixture's TensorRT build has no tree to drop", i)
		}
	}
	if s := Summary(settled, SummaryOptions{}); !strings.Contains(s, "### TensorRT builds in") || !strings.Contains(s, "**Phases by self time**") {
		t.Error("no script section with its phases: the fixture does not test reading them back")
	}
	if got := settled.Builds[3].Log; len(got) != 2 || got[0].Text != "w1" { // of info, w1, w2
		t.Errorf("a build without errors keeps log lines %v, want the warnings lastLog quotes", got)
	}
	if got := settled.Builds[5].Log; len(got) != 7 || got[6].Text != "error 5" {
		t.Errorf("a failed build keeps log lines %v, want its errors", got)
	}

	same := func(what string, f func(r *Report) string) {
		t.Helper()
		if w, s := f(whole), f(settled); w != s {
			t.Errorf("%s differs with settled builds:\n%s", what, firstDifference(w, s))
		}
	}
	dir := t.TempDir()
	same("report JSON", func(r *Report) string {
		path := filepath.Join(dir, "r.json")
		if err := WriteJSON(path, r); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		return string(data)
	})
	for _, opts := range []SummaryOptions{{}, {TopPhases: 3}, {MaxBytes: 60_000}, {MaxBytes: 20_000}, {MaxBytes: 3_000}} {
		same(fmt.Sprintf("summary %+v", opts), func(r *Report) string { return Summary(r, opts) })
	}
	if s := Summary(settled, SummaryOptions{}); !strings.Contains(s, "builds shown; the rest would exceed the diagram size limit") {
		t.Error("the fixture does not fill the timeline: its cap is not tested")
	}
	same("JUnit", func(r *Report) string {
		var b bytes.Buffer
		if err := WriteJUnit(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.String()
	})
	same("headline", Headline)
	same("per build", func(r *Report) string {
		var b strings.Builder
		for i := range r.Builds {
			p, ok := SlowestPath(&r.Builds[i])
			fmt.Fprintln(&b, p, ok)
			fmt.Fprintf(&b, "%s\n", mustJSON(t, wholeBuild(t, &r.Builds[i])))
		}
		return b.String()
	})
}

func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d:\n whole   %q\n settled %q", i, a[from:min(len(a), i+80)], b[from:min(len(b), i+80)])
}

// mustJSON is b's JSON with the keys of every object in order: a settled
// build read back holds its settings as JSON does (map[string]any), a
// live one as the supervisor made them (settings.Shape: min, opt, max).
func mustJSON(t *testing.T, b Build) string {
	t.Helper()
	var buf bytes.Buffer
	if err := (&buildCache{}).writeBuild(&buf, 0, &b); err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(buf.Bytes(), &generic); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(generic)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// BenchmarkSettledBuildMemory is the memory a finished build holds in the
// report, kept whole (settle=false, as before Settle) or settled: the live
// heap after 2,000 builds, over 2,000. Each build has a folded tree, its 20
// slowest instances and 200 log lines, as the supervisor's builds do.
func BenchmarkSettledBuildMemory(b *testing.B) {
	benchSettledHeap(b, func(i int, tree []*Phase) Build {
		build := okBuild(fmt.Sprint("b-", i), 0, 60_000)
		build.PhaseTree, build.SlowestPhases = FoldInstances(tree, 60_000, DefaultSlowestInstances)
		build.Phases = nil
		for j := range 200 {
			build.Log = append(build.Log, LogLine{Severity: "info", Text: fmt.Sprint("line ", j)})
		}
		return build
	})
}

// BenchmarkSettledScriptBuildMemory is BenchmarkSettledBuildMemory for
// builds that ran a command: each holds two TensorRT builds, each with a
// folded tree, its 20 slowest instances and its settings, and 200 lines of
// output, as the supervisor's do.
func BenchmarkSettledScriptBuildMemory(b *testing.B) {
	benchSettledHeap(b, func(i int, tree []*Phase) Build {
		build := scriptsReport().Builds[1]
		build.Name = fmt.Sprint("b-", i)
		build.Script.OutputTail = nil
		for j := range 200 {
			build.Script.OutputTail = append(build.Script.OutputTail, fmt.Sprint("line ", j))
		}
		for k := range build.TensorRTBuilds {
			t := &build.TensorRTBuilds[k]
			t.PhaseTree, t.SlowestPhases = FoldInstances(tree, 60_000, DefaultSlowestInstances)
		}
		return build
	})
}

// benchSettledHeap reports the live heap per build after 2,000 builds
// made by build (from a 2,000-instance phase tree), kept whole
// (settle=false) or settled.
func benchSettledHeap(b *testing.B, build func(i int, tree []*Phase) Build) {
	for _, settle := range []bool{false, true} {
		b.Run(fmt.Sprintf("settle=%v", settle), func(b *testing.B) {
			const n = 2_000
			tree := hugePhaseTree()
			for b.Loop() {
				r := &Report{Version: SchemaVersion, Builds: make([]Build, n)}
				r.KeepEncodings()
				var before runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for i := range n {
					bl := build(i, tree)
					if settle {
						r.Settle(i, &bl)
					} else {
						r.Builds[i] = bl
					}
				}
				var after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/build")
				runtime.KeepAlive(r)
			}
		})
	}
}

// wholeBuild is b with all its detail: b itself, or for a build the report
// settled, read back from its encoding.
func wholeBuild(t *testing.T, b *Build) Build {
	t.Helper()
	if b.digest == nil {
		return *b
	}
	whole, err := b.digest.whole()
	if err != nil {
		t.Fatal(err)
	}
	return whole
}

// A build settled again after it ended (its push to the shared store
// ended later: event.CachePushed) is encoded anew: the report has the new
// entry, with the phase tree it had.
func TestSettleAgainAfterTheEnd(t *testing.T) {
	r, whole := settledCopy(t, 10), mixedMatrix(10)
	i := 0
	for len(whole.Builds[i].Folded()) == 0 || !ended(&whole.Builds[i]) {
		i++
	}
	b := whole.Builds[i]
	b.Cache = &CacheUse{Key: "k", Stored: true, Pushed: true, Transfer: &CacheTransfer{Direction: TransferPush, Bytes: 42, Ms: 7}}
	b.Warnings = append(b.Warnings[:len(b.Warnings):len(b.Warnings)], CacheWarningPrefix+"late")
	r.Settle(i, &b)
	if r.Builds[i].PhaseTree != nil || r.Builds[i].digest == nil {
		t.Fatal("the build settled again keeps its tree in memory")
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := WriteJSON(path, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	got := back.Builds[i]
	if got.Cache == nil || !got.Cache.Pushed || got.Cache.Transfer == nil || got.Cache.Transfer.Bytes != 42 ||
		len(got.Warnings) != len(b.Warnings) || len(got.Folded()) != len(b.Folded()) {
		t.Errorf("read back: cache %+v, %d warnings, %d roots; want the new entry with its tree", got.Cache, len(got.Warnings), len(got.Folded()))
	}
}
