package report

import (
	"slices"
	"time"
)

// phaseTree is one build's phases as TensorRT reports them (times in ms
// from the build's start).
func phaseTree(endMs int64, finished bool) []*Phase {
	end := endMs
	if !finished {
		end = -1
	}
	return []*Phase{{
		Name: "Building engine", StartMs: 100, EndMs: end, Done: 4, Steps: 6,
		Children: []*Phase{
			{Name: "Optimizing graph", StartMs: 200, EndMs: 4000, Done: 28, Steps: 33},
			{Name: "Computing profile costs", StartMs: 4000, EndMs: end, Done: 9, Steps: 10, Children: []*Phase{
				{Name: "Timing tactics", StartMs: 4100, EndMs: end, Done: 1, Steps: 3},
			}},
		},
	}}
}

func okBuild(name string, startMs, durMs int64) Build {
	return Build{
		Name: name, Backend: "sim", Status: StatusOK, StartMs: startMs, DurationMs: durMs,
		BudgetUse: 42, Callbacks: 3300, Phases: phaseTree(durMs-100, true),
		Engine: &Engine{Path: "out/" + name + ".engine", Bytes: 12_345_678, SHA256: "ab"},
	}
}

func overBudgetBuild(name string, startMs, durMs int64) Build {
	return Build{
		Name: name, Backend: "tensorrt-rtx", Status: StatusBudgetExceeded, StartMs: startMs, DurationMs: durMs,
		Reason: `phase "Timing tactics" over its 10s limit`,
		Budget: &BudgetHit{Kind: "phase", Phase: "Building engine/Computing profile costs/Timing tactics", LimitMs: 10_000, ElapsedMs: 10_400},
		Phases: phaseTree(durMs, false),
		Log: []LogLine{
			{Severity: "warning", Text: "Unused input"},
			{Severity: "error", Text: "Build cancelled by the progress monitor"},
		},
	}
}

func sampleReport() *Report {
	failed := Build{
		Name: "bert|large", Backend: "tensorrt", GPU: "1", Status: StatusFailed, StartMs: 40_000, DurationMs: 1_500,
		Reason:   "parser error: unsupported op <NonZero> & friends",
		Warnings: []string{"timing cache ignored: version mismatch"},
		Log:      []LogLine{{Severity: "error", Text: "ModelImporter.cpp:123: <b>NonZero</b> not supported"}},
	}
	return &Report{
		Version: SchemaVersion, Tool: "trt-action 0.1.0", Matrix: "matrix.yaml",
		StartedAt:  time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		DurationMs: 41_500, Complete: true,
		Builds: []Build{okBuild("resnet-fp16", 0, 20_000), overBudgetBuild("yolo_v8", 20_000, 15_000), failed},
	}
}

// script is the event sequence of one build: phases, heartbeats every
// 400 ms (faster than the views' 1 s bound), and its end.
func script(idx int, b Build, start time.Duration) []Event {
	at := func(msOff int64) time.Duration { return start + ms(msOff) }
	ev := func(kind EventKind, off int64) Event {
		return Event{Kind: kind, At: at(off), Build: idx, Name: b.Name}
	}
	end := b.DurationMs
	out := []Event{ev(BuildStarted, 0)}
	phase := func(kind EventKind, off int64, path []string, done, steps int, elapsed int64) {
		e := ev(kind, off)
		e.Path, e.Done, e.Steps, e.Elapsed = path, done, steps, ms(elapsed)
		out = append(out, e)
	}
	root := []string{"Building engine"}
	opt := append(slices.Clone(root), "Optimizing graph")
	costs := append(slices.Clone(root), "Computing profile costs")
	timing := append(slices.Clone(costs), "Timing tactics")
	phase(PhaseStarted, 100, root, 0, 6, 0)
	phase(PhaseStarted, 200, opt, 0, 33, 0)
	phase(PhaseFinished, 4000, opt, 28, 33, 3800)
	phase(PhaseStarted, 4000, costs, 0, 10, 0)
	phase(PhaseStarted, 4100, timing, 0, 3, 0)
	for off := int64(300); off < end; off += 400 {
		e := ev(Heartbeat, off)
		e.Progress = progressAt(off, end)
		out = append(out, e)
	}
	if b.Status == StatusOK {
		phase(PhaseFinished, end-300, timing, 3, 3, end-4400)
		phase(PhaseFinished, end-200, costs, 10, 10, end-4200)
		phase(PhaseFinished, end-100, root, 6, 6, end-200)
	} else {
		w := ev(BudgetWarning, end/2)
		w.Message = "phase Timing tactics used 80% of its 10s budget"
		out = append(out, w)
		s := ev(Stopping, end-100)
		s.Message = b.Reason
		out = append(out, s)
	}
	out = slices.DeleteFunc(out, func(e Event) bool { return e.At >= at(end) }) // a short build ends early
	done := ev(BuildFinished, end)
	done.Result = &b
	out = append(out, done)
	slices.SortStableFunc(out, func(x, y Event) int { return int(x.At - y.At) })
	return out
}

func progressAt(off, end int64) *Progress {
	p := &Progress{Elapsed: ms(off), Callbacks: off * 3, BudgetLeft: ms(30_000 - off), BudgetName: "build"}
	p.Active = []ActivePhase{{Name: "Building engine", Done: 1, Steps: 6, Elapsed: ms(off - 100)}}
	if off < 4000 {
		p.Active = append(p.Active, ActivePhase{Name: "Optimizing graph", Done: int(off / 200), Steps: 33})
	} else {
		p.Active = append(p.Active,
			ActivePhase{Name: "Computing profile costs", Done: 4, Steps: 10},
			ActivePhase{Name: "Timing tactics", Done: 1, Steps: 3},
			ActivePhase{Name: "Timing graph nodes", Done: 5, Steps: 12},
			ActivePhase{Name: "Measuring tactic time", Done: 1, Steps: 4})
	}
	if off > end-2500 {
		p.Silent = ms(off - (end - 2500) + 10_000)
	}
	return p
}

// runScript is a whole run: RunStarted, the builds' scripts (sequential or
// overlapping) merged in time order, RunFinished.
func runScript(r *Report, parallel bool) []Event {
	events := []Event{{Kind: RunStarted, Build: -1, Total: len(r.Builds)}}
	var builds []Event
	var next time.Duration
	for i, b := range r.Builds {
		start := ms(b.StartMs)
		if !parallel {
			start = next
		}
		builds = append(builds, script(i, b, start)...)
		next = start + ms(b.DurationMs)
	}
	slices.SortStableFunc(builds, func(x, y Event) int { return int(x.At - y.At) })
	events = append(events, builds...)
	last := events[len(events)-1].At
	return append(events, Event{Kind: RunFinished, At: last, Build: -1, Run: r})
}

// parallelReport has two builds overlapping in time, run with Jobs: 2.
func parallelReport() *Report {
	r := sampleReport()
	r.Builds = r.Builds[:2]
	r.Builds[1].StartMs = 5_000
	r.Builds[1].DurationMs = 30_000
	r.DurationMs = 35_000
	return r
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
