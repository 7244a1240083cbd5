package trace

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// recording is NVIDIA's sample monitor drawing a TensorRT 10.16 MNIST build.
// CI checks out the shared directory beside the project.
const recording = "../../../shared/traces/trt-10.16-mnist-progress.ansi.log"

// redraw renders one frame the way the sample monitor does: rows, one blank
// row after a finish, then the cursor back up over all of them.
func redraw(blanks int, rows ...string) string {
	var b strings.Builder
	b.WriteString("\x1b[0G")
	for _, r := range rows {
		b.WriteString("\x1b[2K" + r + "\n")
	}
	for range blanks {
		b.WriteString("\x1b[2K\n")
	}
	fmt.Fprintf(&b, "\x1b[%dA", len(rows)+blanks)
	return b.String()
}

func eventsText(events []Event) string {
	var b strings.Builder
	for _, ev := range events {
		switch ev.Kind {
		case Start:
			fmt.Fprintf(&b, "start %s<%s>%d;", ev.Phase, ev.Parent, ev.Steps)
		case Step:
			fmt.Fprintf(&b, "step %s %d;", ev.Phase, ev.Step)
		case Finish:
			fmt.Fprintf(&b, "finish %s;", ev.Phase)
		}
	}
	return b.String()
}

func TestConvertANSI(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"one callback per redraw",
			"[Cookbook] header\n[TRT] [W] a log line\n" +
				redraw(0, "[----------] A 0/2") +
				redraw(0, "[----------] A 0/2") + // stepComplete(0) repeats the start frame
				redraw(0, "[-----] A 0/2", " [--] B 0/3") +
				redraw(0, "[-----] A 0/2", " [--] B 0/3") +
				redraw(0, "[-----] A 0/2", " [==] B 2/3") +
				redraw(1, "[-----] A 0/2") +
				redraw(0, "[=====] A 1/2") +
				redraw(1) + "Finish\n",
			"start A<>2;step A 0;start B<A>3;step B 0;step B 2;finish B;step A 1;finish A;"},
		{"several callbacks in one frame",
			redraw(0, "[-] A 0/2") +
				redraw(0, "[=] A 1/2", " [-] B 0/3", "  [=] C 2/4", " [-] D 0/1") +
				redraw(2, "[=] A 1/2"),
			"start A<>2;step A 1;start B<A>3;start C<B>4;step C 2;start D<A>1;finish D;finish C;finish B;"},
		{"name reused with other steps is a restart",
			redraw(0, "[-] A 0/2", " [-] B 1/3") +
				redraw(0, "[-] A 0/2", " [-] B 0/5"),
			"start A<>2;start B<A>3;step B 1;finish B;start B<A>5;"},
		{"an unchanged frame is a step of the innermost phase",
			redraw(0, "[-] A 0/2", " [-] B 0/3") +
				redraw(0, "[-] A 0/2", " [-] B 0/3") +
				redraw(0, "[-] A 0/2", " [-] B 0/3"),
			"start A<>2;start B<A>3;step B 0;step B 0;"},
		{"log lines between and inside frames are skipped",
			redraw(0, "[-] A 0/2") + "[TRT] [W] warning\n" +
				"\x1b[0G[TRT] [I] stray\n\x1b[2K[-] A 1/2\n\x1b[1A",
			"start A<>2;step A 1;"},
		{"unterminated last frame", "\x1b[0G\x1b[2K[-] A 0/2\n\x1b[0G\x1b[2K[-] A 1/2",
			"start A<>2;step A 1;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := ConvertANSI(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := eventsText(events); got != tt.want {
				t.Errorf("events:\n got %s\nwant %s", got, tt.want)
			}
			for _, ev := range events {
				if ev.Thread != 1 || ev.T != 0 {
					t.Errorf("event %+v: want thread 1 and t 0", ev)
				}
			}
		})
	}
}

func TestConvertANSIErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no frames", "just a log\n", "ansi: no progress rows found (want ESC[0G followed by ESC[2K [bar] name step/nbSteps rows)"},
		{"only empty frames", "\x1b[0G\x1b[2K\n\x1b[1A", "ansi: no progress rows found (want ESC[0G followed by ESC[2K [bar] name step/nbSteps rows)"},
		{"bad row", "header\n" + redraw(0, "[-] A 0/2", "[-] B two/3"),
			`ansi:3: cannot read progress row "[-] B two/3" (want [bar] name step/nbSteps)`},
		{"count not below nbSteps", redraw(0, "[-] A 2/2"),
			`ansi:1: phase "A" shows step 2 of 2 (want a step below nbSteps)`},
		{"zero nbSteps", redraw(0, "[-] A 0/0"),
			`ansi:1: phase "A" has nbSteps 0 (want 1 to 2147483647)`},
		{"nbSteps too large", redraw(0, "[-] A 0/3000000000"),
			`ansi:1: phase "A" has nbSteps 3000000000 (want 1 to 2147483647)`},
		{"duplicate name", redraw(0, "[-] A 0/2", " [-] A 0/2"),
			`ansi:2: phase "A" is drawn twice in one frame (running phase names are unique)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ConvertANSI(strings.NewReader(tt.in))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func readRecording(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(recording)
	// In CI the recording must be read, never skipped: the project's CI
	// has ../shared beside it. A CI without it (GitHub's runners) must opt
	// out visibly with TRT_ACTION_NO_SHARED=1.
	if os.IsNotExist(err) && (os.Getenv("CI") == "" || os.Getenv("TRT_ACTION_NO_SHARED") == "1") {
		t.Skipf("recording not present (%s); CI checks out ../shared beside the project", recording)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The recording has 6,439 redraws and the sample monitor redraws once per
// callback, so a faithful conversion yields exactly one event per redraw.
func TestConvertRecording(t *testing.T) {
	data := readRecording(t)
	events, err := ConvertANSI(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	redraws := strings.Count(string(data), "\x1b[0G")
	s := summarize(events)
	if s.Callbacks != 6439 || redraws != 6439 {
		t.Errorf("%d callbacks from %d redraws, want 6439 of each", s.Callbacks, redraws)
	}
	if s.Starts != 1164 || s.Steps != 4111 || s.Finishes != 1164 || s.Running != 0 {
		t.Errorf("starts/steps/finishes/running = %d/%d/%d/%d, want 1164/4111/1164/0", s.Starts, s.Steps, s.Finishes, s.Running)
	}
	checkRecordedTree(t, events)
}

// phaseNode collects what a trace says about one phase path.
type phaseNode struct {
	steps     []int // distinct nbSteps seen
	lastSteps []int // distinct last step before finish (-1: none)
}

// phaseTree keys phases by their parent chain: TensorRT's phase names are
// unique only within one phase hierarchy and may be reused once an instance
// has finished (IProgressMonitor::phaseStart in NVIDIA/TensorRT's
// include/NvInfer.h), and in the recording "Evaluating tactic times" and
// "Measuring tactic time" occur at two depths.
func phaseTree(events []Event) map[string]*phaseNode {
	tree := map[string]*phaseNode{}
	path := map[string]string{} // running phase -> its path
	last := map[string]int{}
	for _, ev := range events {
		switch ev.Kind {
		case Start:
			p := ev.Phase
			if ev.Parent != "" {
				p = path[ev.Parent] + " > " + ev.Phase
			}
			path[ev.Phase], last[ev.Phase] = p, -1
			if tree[p] == nil {
				tree[p] = &phaseNode{}
			}
			if !slices.Contains(tree[p].steps, ev.Steps) {
				tree[p].steps = append(tree[p].steps, ev.Steps)
			}
		case Step:
			last[ev.Phase] = ev.Step
		case Finish:
			n := tree[path[ev.Phase]]
			if !slices.Contains(n.lastSteps, last[ev.Phase]) {
				n.lastSteps = append(n.lastSteps, last[ev.Phase])
			}
			delete(path, ev.Phase)
		}
	}
	for _, n := range tree {
		slices.Sort(n.steps)
		slices.Sort(n.lastSteps)
	}
	return tree
}

// checkRecordedTree compares a trace with the phase tree of the recorded
// TensorRT 10.16 MNIST build (the phases, their nesting and their nbSteps,
// read from the recording), written out below.
func checkRecordedTree(t *testing.T, events []Event) {
	t.Helper()
	const (
		be   = "Building engine"
		sub  = be + " > Building engine from subgraph"
		cost = sub + " > Computing profile costs"
		tt   = cost + " > Timing tactics"
		gn   = tt + " > Timing graph nodes"
		cr   = tt + " > Timing tensor reformats > Computing reformatting costs"
	)
	// nbSteps per path: exact set, or [min, max] where the recording has a
	// range.
	want := map[string][]int{
		be:                              {6},
		be + " > Cloning network graph": {30},
		be + " > Preparing graph for optimization": {4},
		sub:                               {1},
		sub + " > Optimizing graph":       {33},
		cost:                              {10},
		tt:                                {3},
		gn:                                {12},
		gn + " > Evaluating tactic times": {1, 153},
		gn + " > Evaluating tactic times > Measuring tactic time": {2, 4},
		tt + " > Timing tensor reformats":                         {12},
		cr:                                                        {1, 9},
		cr + " > Evaluating tactic times":                         {3},
		cr + " > Evaluating tactic times > Measuring tactic time": {2, 4},
		cost + " > Determining refit engines":                     {5},
	}
	tree := phaseTree(events)
	for path, n := range tree {
		w, ok := want[path]
		if !ok {
			t.Errorf("unexpected phase path %q", path)
			continue
		}
		got := n.steps
		if len(w) == 2 && w[0] == 1 { // a range: compare the extremes
			got = []int{n.steps[0], n.steps[len(n.steps)-1]}
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: nbSteps %v, want %v", path, n.steps, w)
		}
	}
	for path := range want {
		if tree[path] == nil {
			t.Errorf("missing phase path %q", path)
		}
	}
	for path, last := range map[string]int{be: 4, sub + " > Optimizing graph": 28, tt: 1, be + " > Cloning network graph": 29} {
		if n := tree[path]; n != nil && !slices.Equal(n.lastSteps, []int{last}) {
			t.Errorf("%s finished after steps %v, want %d", path, n.lastSteps, last)
		}
	}
	if d := summarize(events).MaxDepth; d != 8 {
		t.Errorf("max depth %d, want 8", d)
	}
}
