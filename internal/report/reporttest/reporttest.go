// Package reporttest holds the sample reports that the report's tests and the
// views' tests render, so every golden file is made from one fixture.
// Only tests import it.
package reporttest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/settings"
)

// PhaseTree is one build's phases as TensorRT reports them (times in ms
// from the build's start).
func PhaseTree(endMs int64, finished bool) []*report.Phase {
	end := endMs
	if !finished {
		end = -1
	}
	return []*report.Phase{{
		Name: "Building engine", StartMs: 100, EndMs: end, Done: 4, Steps: 6,
		Children: []*report.Phase{
			{Name: "Optimizing graph", StartMs: 200, EndMs: 4000, Done: 28, Steps: 33},
			{Name: "Computing profile costs", StartMs: 4000, EndMs: end, Done: 9, Steps: 10, Children: []*report.Phase{
				{Name: "Timing tactics", StartMs: 4100, EndMs: end, Done: 1, Steps: 3},
			}},
		},
	}}
}

// OKBuild is a build that finished within its budgets.
func OKBuild(name string, startMs, durMs int64) report.Build {
	return report.Build{
		Name: name, Backend: backend.Sim, Status: report.StatusOK, StartMs: startMs, DurationMs: durMs,
		BudgetUse: 42, Callbacks: 3300, Phases: PhaseTree(durMs-100, true),
		Engine: &report.Engine{Path: "out/" + name + ".engine", Bytes: 12_345_678, SHA256: "ab"},
	}
}

// OverBudgetBuild is a build a phase budget stopped.
func OverBudgetBuild(name string, startMs, durMs int64) report.Build {
	return report.Build{
		Name: name, Backend: backend.TensorRTRTX, Status: report.StatusBudgetExceeded, StartMs: startMs, DurationMs: durMs,
		Reason: `phase "Timing tactics" over its 10s limit`,
		Budget: &report.BudgetHit{Kind: "phase", Phase: "Building engine/Computing profile costs/Timing tactics", LimitMs: 10_000, ElapsedMs: 10_400},
		Phases: PhaseTree(durMs, false),
		Log: []report.LogLine{
			{Severity: "warning", Text: "Unused input"},
			{Severity: "error", Text: "Build cancelled by the progress monitor"},
		},
	}
}

// Sample is a finished run of three builds: ok, over budget, failed (with
// text that must be escaped).
func Sample() *report.Report {
	failed := report.Build{
		Name: "bert|large", Backend: backend.TensorRT, GPU: "1", Status: report.StatusFailed, StartMs: 40_000, DurationMs: 1_500,
		Reason:   "parser error: unsupported op <NonZero> & friends",
		Warnings: []string{"timing cache ignored: version mismatch"},
		Log:      []report.LogLine{{Severity: "error", Text: "ModelImporter.cpp:123: <b>NonZero</b> not supported"}},
	}
	return &report.Report{
		Version: report.SchemaVersion, Tool: "trt-action 0.1.0", Matrix: "matrix.yaml",
		StartedAt:  time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		DurationMs: 41_500, Complete: true,
		Builds: []report.Build{OKBuild("resnet-fp16", 0, 20_000), OverBudgetBuild("yolo_v8", 20_000, 15_000), failed},
	}
}

// Parallel has two builds overlapping in time, run with Jobs: 2.
func Parallel() *report.Report {
	r := Sample()
	r.Builds = r.Builds[:2]
	r.Builds[1].StartMs = 5_000
	r.Builds[1].DurationMs = 30_000
	r.DurationMs = 35_000
	return r
}

// Mixed is a run of n builds of every kind: ok ones (some with the
// every-instance tree only, some folded), over budget, failed with log
// lines, one without phases, builds that ran a command (Scripts' three),
// and a few still running or pending. Names vary
// in length so the timeline's sections do too, and n = 400 overflows the
// timeline's size limit.
func Mixed(n int) *report.Report {
	r := Sample()
	r.Builds = nil
	for i := range n {
		name := fmt.Sprintf("b-%d-%s", i, strings.Repeat("x", i%37))
		var b report.Build
		switch i % 7 {
		case 0, 1, 2:
			b = OKBuild(name, int64(i)*300, 20_000+int64(i))
		case 3:
			b = OKBuild(name, int64(i)*300, 9_000)
			b.PhaseTree, b.SlowestPhases = report.FoldInstances(b.Phases, b.DurationMs, report.DefaultSlowestInstances)
			b.Phases = nil
			b.Log = []report.LogLine{{Severity: "info", Text: "info"}, {Severity: "warning", Text: "w1"}, {Severity: "warning", Text: "w2"}}
		case 4:
			b = OverBudgetBuild(name, int64(i)*300, 15_000)
		case 5:
			b = Sample().Builds[2]
			b.Name = name
			b.Log = append(b.Log, report.LogLine{Severity: "warning", Text: "after"})
			for e := range 6 { // more than the summary quotes; JUnit has them all
				b.Log = append(b.Log, report.LogLine{Severity: "error", Text: fmt.Sprint("error ", e)})
			}
		case 6:
			b = OKBuild(name, int64(i)*300, 5_000)
			b.Phases = nil
			switch {
			case i%3 == 0:
				b.Status = report.StatusRunning // a running build is never settled
				b.Phases = PhaseTree(4_000, false)
			case i%3 == 1 && i%2 == 1: // builds that ran a command
				b = YoloExport(int64(i) * 300)
				for l := range 15 { // more than the summary quotes; JUnit has them all
					b.Script.OutputTail = append(b.Script.OutputTail, fmt.Sprint("progress ", l))
				}
			case i%3 == 1:
				b = CrashedScript(int64(i) * 300)
			case i%4 == 0:
				b = UnobservedScript(int64(i) * 300)
			}
			b.Name = name
		}
		r.Builds = append(r.Builds, b)
	}
	r.Builds[n-1].Status = report.StatusPending
	return r
}

// Settled is Mixed(n) as the supervisor holds it: every build handed to
// Settle, so ended builds keep their trees in the report's spool only.
func Settled(n int) *report.Report {
	r := Mixed(n)
	whole := slices.Clone(r.Builds)
	r.KeepEncodings()
	for i := range whole {
		r.Settle(i, &whole[i])
	}
	return r
}

// CacheHit is a build whose engine came from the engine cache in 50 ms;
// the build that made it took buildMs.
func CacheHit(name string, buildMs int64) report.Build {
	return report.Build{Name: name, Backend: backend.Sim, Status: report.StatusCached, DurationMs: 50,
		Cache: &report.CacheUse{Key: strings.Repeat("e", 64), Hit: true, BuildMs: buildMs}}
}

// Rebuilt is a run with the engine cache and --rebuild: resnet-fp16
// rebuilt, its engine in place of the entry that was there; yolo_v8 built
// and stored; bert-int8 a hit.
func Rebuilt() *report.Report {
	r := Sample()
	rebuilt := OKBuild("resnet-fp16", 0, 20_000)
	rebuilt.Cache = &report.CacheUse{Key: strings.Repeat("a", 64), Stored: true, Rebuilt: true, Replaced: true}
	stored := OKBuild("yolo_v8", 20_000, 15_000)
	stored.Cache = &report.CacheUse{Key: strings.Repeat("b", 64), Stored: true}
	hit := CacheHit("bert-int8", 843_000)
	hit.StartMs = 35_000
	hit.Cache.BuiltAt = r.StartedAt.Add(-49 * time.Hour)
	r.Builds = []report.Build{rebuilt, stored, hit}
	r.DurationMs = 35_050
	return r
}

// SharedRemote is the shared store of the Shared sample (a URL without
// credentials, as the report keeps it).
const SharedRemote = "oci://ghcr.io/acme/engines"

// Shared is a run with a shared cache store behind the cache folder:
//   - resnet-fp16: a remote hit, its 1.2 GB engine pulled in 14.1s (the
//     engine was built two days before, in 41m);
//   - yolo_v8: built, stored and pushed;
//   - bert-int8: a local hit the store lacked, pushed (a warm runner
//     seeds the fleet);
//   - mobilenet: built and stored; another runner pushed its key first;
//   - vit-b16: built and stored; its push failed after 5 MB (the store's
//     warning; SharedStopped says why).
func Shared() *report.Report {
	r := Sample()
	pulled := CacheHit("resnet-fp16", 41*60_000)
	pulled.DurationMs = 14_300
	pulled.Library = "TensorRT-RTX 1.7.1.116"
	pulled.Engine = &report.Engine{Path: "out/resnet-fp16.engine", Bytes: 1_234_567_890, SHA256: "cd"}
	pulled.Cache.From, pulled.Cache.BuiltAt = report.CacheFromRemote, r.StartedAt.Add(-49*time.Hour)
	pulled.Cache.Transfer = &report.CacheTransfer{Direction: report.TransferPull, Bytes: 1_234_567_890, Ms: 14_100}
	original := OKBuild("resnet-fp16", 0, 41*60_000)
	original.Library = pulled.Library
	pulled.Cache.Original = &original
	built := OKBuild("yolo_v8", 0, 15_000)
	built.Cache = &report.CacheUse{Key: strings.Repeat("b", 64), Stored: true, Pushed: true,
		Transfer: &report.CacheTransfer{Direction: report.TransferPush, Bytes: 48_000_000, Ms: 2_300}}
	seeded := CacheHit("bert-int8", 843_000)
	seeded.StartMs = 15_000
	seeded.Cache.From, seeded.Cache.Pushed = report.CacheFromLocal, true
	seeded.Cache.Transfer = &report.CacheTransfer{Direction: report.TransferPush, Bytes: 310_000_000, Ms: 4_100}
	beaten := OKBuild("mobilenet", 15_050, 9_000)
	beaten.Cache = &report.CacheUse{Key: strings.Repeat("c", 64), Stored: true,
		Transfer: &report.CacheTransfer{Direction: report.TransferPush, Bytes: 14_000_000, Ms: 900}}
	failedPush := OKBuild("vit-b16", 24_050, 11_000)
	failedPush.Cache = &report.CacheUse{Key: strings.Repeat("d", 64), Stored: true,
		Transfer: &report.CacheTransfer{Direction: report.TransferPush, Bytes: 5_000_000, Ms: 3_000}}
	failedPush.Warnings = []string{report.CacheWarningPrefix + "the push to " + SharedRemote + " failed: HTTP 503 Service Unavailable after 3 tries; the engine stays in the cache folder"}
	r.Builds = []report.Build{pulled, built, seeded, beaten, failedPush}
	r.DurationMs = 35_050
	r.Cache = &report.RunCache{Remote: SharedRemote, RemoteMode: "read-write",
		Warnings: []string{SharedRemote + ": HTTP 503 Service Unavailable after 3 tries (pushes of 1 build failed)"}}
	return r
}

// HostileShared is Shared run read-only from a fork's pull request, where
// the store's text is hostile: the remote hit's original build was named
// "::error::x @octocat", and its library, the store's warnings and a
// transfer's error say things a runner or GitHub would act on. Every view
// must show them inert.
func HostileShared() *report.Report {
	r := Shared()
	hit := &r.Builds[0]
	hit.Library = "::error::lib @octocat"
	hit.Cache.Original.Name = "::error::x @octocat"
	hit.Cache.Original.Reason = "##[error]reason @octocat"
	hit.Cache.Original.Warnings = []string{"::warning::w @octocat"}
	hit.Warnings = []string{report.CacheWarningPrefix + "entry of ::error::x @octocat refused: ##[warning]y"}
	r.Cache.RemoteMode = "read-only"
	r.Cache.ModeNote = "read-only: this pull_request run's head repository (octocat/fork) is not acme/engines, so the code that runs may not write engines others deliver"
	r.Cache.Warnings = []string{"::error::store says @octocat"}
	r.Builds[4].Warnings = nil // no push was tried
	for i := range r.Builds {  // read-only: nothing pushed
		c := r.Builds[i].Cache
		c.Pushed = false
		if c.Transfer != nil && c.Transfer.Direction == report.TransferPush {
			c.Transfer = nil
		}
	}
	return r
}

// ReadBack is r as its JSON report holds it: written and read again, so a
// test sees every build whole (a settled build's detail lives in the
// report's spool until then), exactly as a user of the report would.
func ReadBack(t testing.TB, r *report.Report) *report.Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	if err := report.WriteJSON(path, r); err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// Scripts is a run of an ONNX build beside three builds that ran a
// command (run:), as the supervisor reports them:
//   - yolo-export: an Ultralytics-style export script that built two
//     engines, the first ok, the second stopped by a phase budget; the
//     script then failed on the missing engine, and the engine it wrote
//     during the build was removed;
//   - mnist-isolated: python -I, where trt-action's hook cannot load: it
//     built its engine, unseen, and exited 0;
//   - trtllm-build: two processes; the worker aborted inside its build.
func Scripts() *report.Report {
	r := Sample()
	r.Builds = []report.Build{OKBuild("resnet-fp16", 0, 20_000), YoloExport(20_000), UnobservedScript(62_000), CrashedScript(65_100)}
	r.DurationMs = 73_100
	return r
}

// ScriptSettings are the builder settings a script's config held, under
// the matrix's key names, with levels and shapes of its own.
func ScriptSettings(optLevel int, shapes map[string]settings.Shape) *report.Settings {
	applied := map[string]any{
		"precision": []string{"fp16"}, "opt-level": optLevel, "targets": []string{"sm89"},
		"memory-pools":        map[string]int64{"workspace": 4 << 30},
		"profiling-verbosity": "layer-names-only", "tactic-sources": []string{"-jit-convolutions"},
	}
	if shapes != nil {
		applied["shapes"] = shapes
	}
	return &report.Settings{Library: "TensorRT-RTX 1.7.1.116", Applied: applied}
}

// innerFolded is the folded phase tree of a TensorRT build that began
// startMs into its script build and ran durMs: PhaseTree(endMs, finished)
// on the script build's clock, where the supervisor records it.
func innerFolded(startMs, endMs, durMs int64, finished bool) []*report.PhaseNode {
	phases := PhaseTree(endMs, finished)
	var shift func(ps []*report.Phase)
	shift = func(ps []*report.Phase) {
		for _, p := range ps {
			p.StartMs += startMs
			if p.EndMs >= 0 {
				p.EndMs += startMs
			}
			shift(p.Children)
		}
	}
	shift(phases)
	tree, _ := report.FoldInstances(phases, startMs+durMs, report.DefaultSlowestInstances)
	return tree
}

// YoloExport is a script build that ran two TensorRT builds in one process:
// the first ok, the second stopped by a phase budget.
func YoloExport(startMs int64) report.Build {
	yolo := func(name string, dims ...int64) report.Tensor {
		return report.Tensor{Name: name, DType: "FLOAT", Shape: dims}
	}
	budget := &report.BudgetHit{Kind: "phase", Phase: "Building engine/Computing profile costs/Timing tactics", LimitMs: 10_000, ElapsedMs: 10_400}
	return report.Build{
		Name: "yolo-export", Backend: backend.TensorRTRTX, Status: report.StatusBudgetExceeded, StartMs: startMs, DurationMs: 42_000,
		Reason:   `TensorRT build 2: phase "Building engine/Computing profile costs/Timing tactics" ran 10.4s, over its 10s limit`,
		Budget:   budget,
		Warnings: []string{"engine out/yolo11n-dyn.engine was written during the build and removed: the build did not succeed"},
		Library:  "TensorRT-RTX 1.7.1.116", BudgetUse: 104,
		Script: &report.Script{
			Command: []string{"python3", "export.py", "--model", "yolo11n.pt", "--dynamic"}, Workdir: "models",
			ExitCode: new(1), Exit: "exit status 1", Processes: 1,
			OutputTail: []string{
				"Ultralytics 8.3.40 🚀 Python-3.11.2 torch-2.5.1 CPU",
				"TensorRT: starting export with TensorRT 1.7.1.116...",
				"TensorRT: building FP16 engine as yolo11n.engine",
				"TensorRT: export success ✅ 18.2s, saved as 'yolo11n.engine' (12.3 MB)",
				"TensorRT: building FP16 engine as yolo11n-dyn.engine",
				"[TRT] [E] 7: BuildCanceled",
				"Traceback (most recent call last):",
				`  File "export.py", line 41, in <module>`,
				"    f.write(engine)",
				"TypeError: a bytes-like object is required, not 'NoneType'",
			},
		},
		TensorRTBuilds: []report.TensorRTBuild{
			{Index: 1, PID: 4711, Entry: "build_serialized_network", Route: "python", Library: "TensorRT-RTX 1.7.1.116",
				StartMs: 2_000, DurationMs: 18_000, Status: report.StatusOK, Callbacks: 3300, LongestSilenceMs: 1_200,
				PhaseTree: innerFolded(2_000, 17_900, 18_000, true), SerializedBytes: 12_345_678,
				Settings: ScriptSettings(3, nil),
				Network:  &report.Network{Inputs: []report.Tensor{yolo("images", 1, 3, 640, 640)}, Outputs: []report.Tensor{yolo("output0", 1, 84, 8400)}, Layers: 152}},
			{Index: 2, PID: 4711, Entry: "build_serialized_network", Route: "python", Library: "TensorRT-RTX 1.7.1.116",
				StartMs: 24_000, DurationMs: 15_000, Status: report.StatusBudgetExceeded,
				Reason: `phase "Building engine/Computing profile costs/Timing tactics" ran 10.4s, over its 10s limit`, Budget: budget,
				Callbacks: 2100, LongestSilenceMs: 4_100, PhaseTree: innerFolded(24_000, 15_000, 15_000, false),
				Settings: ScriptSettings(5, map[string]settings.Shape{"images": {Min: []int64{1, 3, 320, 320}, Opt: []int64{1, 3, 640, 640}, Max: []int64{8, 3, 1280, 1280}}}),
				Network:  &report.Network{Inputs: []report.Tensor{yolo("images", -1, 3, -1, -1)}, Outputs: []report.Tensor{yolo("output0", -1, 84, -1)}, Layers: 152}},
		},
	}
}

// UnobservedScript is a script build run with python -I: trt-action's
// hook cannot load, so no TensorRT build is seen, yet the program built
// the engine it declared and exited 0.
func UnobservedScript(startMs int64) report.Build {
	return report.Build{
		Name: "mnist-isolated", Backend: backend.TensorRTRTX, Status: report.StatusOK, StartMs: startMs, DurationMs: 3_100,
		Warnings: []string{"no TensorRT build was seen: no Python process of the command loaded trt-action's hook"},
		Script: &report.Script{
			Command: []string{"python3", "-I", "build_mnist.py"}, ExitCode: new(0), Exit: "exit status 0",
			Unobserved: "no Python process loaded trt-action's hook: the command runs python3 -I, which ignores PYTHONPATH",
			OutputTail: []string{"building mnist.engine", "wrote out/mnist.engine (1.6 MB)"},
		},
		Engines: []report.Engine{{Path: "out/mnist.engine", Bytes: 1_612_804, SHA256: "9f2c"}},
	}
}

// CrashedScript is a script build of two processes whose worker aborted
// inside its TensorRT build.
func CrashedScript(startMs int64) report.Build {
	return report.Build{
		Name: "trtllm-build", Backend: backend.TensorRTRTX, Status: report.StatusCrashed, StartMs: startMs, DurationMs: 8_000,
		Reason:  "TensorRT build 1 crashed: process 5120 ended during the build (killed by signal SIGABRT)",
		Library: "TensorRT-RTX 1.7.1.116",
		Script: &report.Script{
			Command: []string{"trtllm-build", "--checkpoint_dir", "ckpt", "--output_dir", "engines"},
			Exit:    "killed by signal SIGABRT", Processes: 2,
			OutputTail: []string{
				"[TensorRT-LLM] TensorRT-LLM version: 0.16.0",
				"[01/10/2025-12:01:05] [TRT-LLM] [I] Set dtype to float16.",
				"[01/10/2025-12:01:07] [TRT] [I] Building engine...",
				"terminate called after throwing an instance of 'std::runtime_error'",
				"  what():  [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp",
			},
		},
		TensorRTBuilds: []report.TensorRTBuild{
			{Index: 1, PID: 5120, Entry: "build_serialized_network", Route: "python", Library: "TensorRT-RTX 1.7.1.116",
				StartMs: 1_500, DurationMs: 6_000, Status: report.StatusCrashed,
				Reason:    "process 5120 ended during the build (killed by signal SIGABRT)",
				Callbacks: 900, LongestSilenceMs: 2_000, PhaseTree: innerFolded(1_500, 6_000, 6_000, false),
				Settings: ScriptSettings(3, nil),
				Network: &report.Network{Inputs: []report.Tensor{{Name: "input_ids", DType: "INT32", Shape: []int64{-1, -1}}, {Name: "position_ids", DType: "INT32", Shape: []int64{-1, -1}}},
					Outputs: []report.Tensor{{Name: "logits", DType: "HALF", Shape: []int64{-1, 32000}}}, Layers: 1_507}},
		},
	}
}

// CachedScripts is a run of builds with run: with the engine cache and a
// shared store:
//   - trtllm-llama: a hit from the shared store: its two engines and its
//     config.json pulled (the command that made them ran 38m, two days
//     before), no command started;
//   - yolo-export: built, stored and pushed;
//   - polygraphy: built ok, not stored: the config.json it declares was
//     left from before (its cache says why, and a warning);
//   - custom: built ok, never cached: it declares no inputs.
func CachedScripts() *report.Report {
	r := Sample()
	original := YoloExport(0)
	original.Name, original.Status, original.Reason, original.DurationMs, original.Budget = "trtllm-llama", report.StatusOK, "", 38*60_000, nil
	original.TensorRTBuilds = original.TensorRTBuilds[:1]
	hit := report.Build{Name: "trtllm-llama", Backend: backend.TensorRTRTX, Status: report.StatusCached, DurationMs: 9_200,
		Library: "TensorRT-RTX 1.7.1.116",
		Engines: []report.Engine{{Path: "engines/rank0.engine", Bytes: 2_100_000_000, SHA256: "a0"}, {Path: "engines/rank1.engine", Bytes: 2_100_000_000, SHA256: "a1"}},
		Outputs: []report.Engine{{Path: "engines/config.json", Bytes: 6_400, SHA256: "c0"}},
		Cache: &report.CacheUse{Key: strings.Repeat("f", 64), Hit: true, From: report.CacheFromRemote, BuildMs: 38 * 60_000,
			BuiltAt:  r.StartedAt.Add(-49 * time.Hour),
			Transfer: &report.CacheTransfer{Direction: report.TransferPull, Bytes: 4_200_006_400, Ms: 9_100}, Original: &original}}
	stored := YoloExport(9_200)
	stored.Status, stored.Reason, stored.Warnings, stored.Budget = report.StatusOK, "", nil, nil
	stored.Script.ExitCode, stored.Script.Exit = new(0), "exit status 0"
	stored.TensorRTBuilds = stored.TensorRTBuilds[:1]
	stored.Engines = []report.Engine{{Path: "yolo11n.engine", Bytes: 12_345_678, SHA256: "b0"}}
	stored.Outputs = []report.Engine{{Path: "yolo11n.json", Bytes: 812, SHA256: "b1"}}
	stored.BudgetUse = 62
	stored.Cache = &report.CacheUse{Key: strings.Repeat("1", 64), Stored: true, Pushed: true,
		Transfer: &report.CacheTransfer{Direction: report.TransferPush, Bytes: 12_345_678, Ms: 700}}
	notStored := UnobservedScript(51_200)
	notStored.Name, notStored.Warnings = "polygraphy", nil
	notStored.Script.Command, notStored.Script.Unobserved = []string{"polygraphy", "convert", "model.onnx", "-o", "out/model.engine"}, ""
	notStored.Engines = []report.Engine{{Path: "out/model.engine", Bytes: 1_612_804, SHA256: "9f2c"}}
	why := "output out/model.json is left from before this build: the command did not write it"
	notStored.Cache = &report.CacheUse{Key: strings.Repeat("2", 64), NotStored: why}
	notStored.Warnings = []string{report.CacheWarningPrefix + "not stored: " + why}
	uncached := UnobservedScript(54_300)
	uncached.Name, uncached.Warnings = "custom", nil
	uncached.Script.Unobserved = ""
	uncached.Cache = &report.CacheUse{KeyUnknown: "not cached: a build with run: is cached only when it declares the files that decide its engines (inputs:)"}
	r.Builds = []report.Build{hit, stored, notStored, uncached}
	r.DurationMs = 57_400
	r.Cache = &report.RunCache{Remote: SharedRemote, RemoteMode: "read-write"}
	return r
}

// Memory is a run with memory figures: an ok build with its host, GPU,
// cgroup and TensorRT figures, one the kernel's OOM killer ended, one a
// memory budget stopped and killed at once, a script build whose
// TensorRT builds have their processes' peaks, and a cache hit (none).
func Memory() *report.Report {
	r := Sample()
	ok := OKBuild("resnet-fp16", 0, 20_000)
	ok.Memory = &report.Memory{PeakHostBytes: 1_812_345_678, PeakGPUBytes: 2_147_483_648, HostSource: report.MemoryFromProcCgroupV1,
		GPUSource: report.MemoryFromNVML, LargestProcessBytes: 1_790_000_000, CgroupPeakBytes: 2_400_000_000,
		HostLimitBytes: 34_359_738_368, TensorRTCPUBytes: 1_956_642_816, TensorRTGPUBytes: 5_090_836_480}
	oom := report.Build{
		Name: "llama-7b", Backend: backend.TensorRT, Status: report.StatusCrashed, StartMs: 20_000, DurationMs: 95_000,
		Reason: "out of host memory (peak 31.2 GB of 32.0 GB)",
		Memory: &report.Memory{PeakHostBytes: 31_200_000_000, HostSource: report.MemoryFromProcCgroupV1, LargestProcessBytes: 31_100_000_000,
			CgroupPeakBytes: 32_000_000_000, OOMKills: 1, HostLimitBytes: 32_000_000_000, TensorRTCPUBytes: 30_064_771_072},
		Phases: PhaseTree(95_000, false),
		Log:    []report.LogLine{{Severity: "info", Text: "[MemUsageChange] Init builder kernel library: CPU +1443, GPU +266, now: CPU 28672, GPU 4855 (MiB)"}},
	}
	over := report.Build{
		Name: "bert-large", Backend: backend.TensorRTRTX, Status: report.StatusBudgetExceeded, StartMs: 40_000, DurationMs: 7_000,
		Reason: "memory budget exceeded: its processes held 8.7 GB (limit 8GiB); it went on to 9.5 GB, more than 10% over its budget, so it was killed at once",
		Budget: &report.BudgetHit{Kind: report.BudgetMemory, ElapsedMs: 6_500, LimitBytes: 8 << 30, PeakBytes: 9_500_000_000}, BudgetUse: 110.6,
		Memory: &report.Memory{PeakHostBytes: 9_500_000_000, HostSource: report.MemoryFromProc, LargestProcessBytes: 9_480_000_000,
			NoCgroup: "cannot make a memory cgroup in /sys/fs/cgroup/system.slice/runner.service: permission denied", HostLimitBytes: 16_000_000_000},
		Phases: PhaseTree(7_000, false),
	}
	script := YoloExport(50_000)
	script.Memory = &report.Memory{PeakHostBytes: 3_400_000_000, HostSource: report.MemoryFromProc, LargestProcessBytes: 3_100_000_000}
	script.TensorRTBuilds[0].Memory = &report.Memory{PeakHostBytes: 3_050_000_000, HostSource: report.MemoryFromProc}
	script.TensorRTBuilds[1].Memory = &report.Memory{PeakHostBytes: 3_100_000_000, HostSource: report.MemoryFromProc}
	r.Builds = []report.Build{ok, oom, over, script, CacheHit("mnist", 4_000)}
	r.DurationMs = 92_000
	return r
}
