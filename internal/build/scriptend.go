package build

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// The end of a script build: its status, its engines, its report entry.

// Bounds on what a command's output leaves in the report: its last
// outputTailLines lines, each cut at maxOutputLine characters (the log
// group had every line).
const (
	outputTailLines = 40
	maxOutputLine   = 4096
)

// outputTail keeps the last lines the command printed.
type outputTail struct {
	lines []string
	total int
}

func (o *outputTail) add(line string) {
	o.total++
	if len(o.lines) == outputTailLines {
		copy(o.lines, o.lines[1:])
		o.lines = o.lines[:outputTailLines-1]
	}
	o.lines = append(o.lines, line)
}

func (o *outputTail) last() string {
	for i := len(o.lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(o.lines[i]); l != "" {
			return text.CutRunes(l, 300)
		}
	}
	return ""
}

// classify decides the script build's status once the command has ended
// and everything it said is read, then settles its engines.
func (s *script) classify() *report.Build {
	w := s.w
	now := w.now()
	for _, in := range s.order {
		if !in.done { // the hub closed: its process is gone
			in.gone = true
			s.conclude(in, now)
		}
	}
	inner := make([]report.TensorRTBuild, len(s.order))
	for i, in := range s.order {
		inner[i] = in.rep
	}
	w.res.Memory = w.mem.end(w.exitState)
	ctl := w.ctl.outcome()
	e := scriptEnding{reaped: s.reaped, exit: exitDescription(s.exitErr), ctl: ctl, budget: s.stopKind(),
		inner: inner, output: s.output.last(), declared: len(s.engines)}
	if w.mem.killedByOOM(ctl.killWhy == "" && s.reaped != nil && s.reaped.Signal == "SIGKILL") {
		e.oom = outOfMemory(w.res.Memory)
	}
	var kept []report.Engine
	if e.exitedZero() {
		kept, e.engines = checkEngines(s.engines)
	}
	status, reason, warnings := decideScriptStatus(e)
	if e.oom != "" && e.exitedZero() {
		w.res.Warnings = append(w.res.Warnings, "the kernel's OOM killer ended a process of the command ("+e.oom+"); the command went on and exited 0")
	}
	if status == report.StatusOK {
		w.hit = nil // a budget that ran out as the command was ending stopped nothing
		w.res.Engines = kept
		w.res.Outputs, w.unwritten = checkOutputs(s.outputs)
		w.res.Warnings = append(w.res.Warnings, warnings...)
	} else if removed := removeWritten(append(slices.Clone(s.engines), s.outputs...)); len(removed) > 0 {
		w.res.Warnings = append(w.res.Warnings, fmt.Sprintf("removed what the build wrote to %s: it did not succeed, so no partial engine is left",
			strings.Join(removed, ", ")))
	}
	s.noteScript(inner)
	if status == report.StatusOK && len(inner) == 0 {
		w.res.Warnings = append(w.res.Warnings, "no TensorRT build was seen in the command"+s.unseenWhy())
	}
	if s.reaped != nil && s.reaped.Leftover > 0 {
		w.res.Warnings = append(w.res.Warnings, leftoverWarning(s.reaped.Leftover))
	}
	if s.reaped != nil && s.reaped.NoSubreaper != "" {
		w.res.Warnings = append(w.res.Warnings, noSubreaperWarning(s.reaped.NoSubreaper))
	}
	return w.finish(status, reason, w.ctl.outcome())
}

// noteScript fills in what only a script build's report entry has.
func (s *script) noteScript(inner []report.TensorRTBuild) {
	w := s.w
	sc := &report.Script{Command: w.spec.Script.Argv, Workdir: w.spec.Script.Workdir,
		OutputTail: append([]string(nil), s.output.lines...), Processes: len(s.procs), Exit: exitDescription(s.exitErr)}
	if r := s.reaped; r != nil {
		sc.Exit, sc.ExitCode = r.describe(), r.ExitCode
	}
	if len(s.procs) == 0 && s.ran() {
		sc.Unobserved = strings.TrimPrefix(s.unseenWhy(), ": ")
	}
	w.res.Script = sc
	w.res.TensorRTBuilds = inner
	// What the command's TensorRT builds saw: every callback, and the
	// longest time one of them went without one (outside them a program
	// may rightly be silent, as the stall budget says).
	for _, in := range inner {
		w.res.Callbacks += in.Callbacks
		w.res.LongestSilenceMs = max(w.res.LongestSilenceMs, in.LongestSilenceMs)
	}
}

// ran reports whether the command started (and the reaper said how it
// ended): only then can it say why the hook saw no build.
func (s *script) ran() bool {
	return s.reaped != nil && s.reaped.StartError == ""
}

// unseenWhy says why no TensorRT build was seen: ": ...". With processes
// that loaded the hook, the builds were elsewhere, or there were none.
func (s *script) unseenWhy() string {
	if n := len(s.procs); n > 0 {
		loaded := "1 process of the command loaded trt-action's hook"
		if n > 1 {
			loaded = fmt.Sprintf("%d processes of the command loaded trt-action's hook", n)
		}
		return ": " + loaded + " and began no TensorRT build through TensorRT's Python bindings; " +
			"a build in a process the hook could not enter is not seen: a child Python started with -S, " +
			"or with -I or -E or PYTHONPATH cleared where trt-action is not installed with pip in its environment, " +
			"or a program that is not Python"
	}
	if s.w.r.opts.HookPath == "" {
		return ": trt-action's Python hook is not installed with this binary"
	}
	return ": no process of the command loaded trt-action's Python hook" + pythonFlagsWhy(s.w.spec.Script.Argv)
}

// pythonFlagsWhy names the interpreter flag on the command line that keeps
// the hook out, or says what can. The hook enters two ways: PYTHONPATH's
// sitecustomize (the bootstrap), which -I and -E (PYTHONPATH ignored) turn
// off, and the .pth file of trt-action installed with pip in the program's
// Python environment, which site runs also under -I and -E; -S (no site
// module) turns off both (https://docs.python.org/3/using/cmdline.html,
// https://docs.python.org/3/library/site.html).
func pythonFlagsWhy(argv []string) string {
	for i, a := range argv {
		if !matrix.IsPython(a) {
			continue
		}
		flags := matrix.ParsePython(argv[i+1:]).Flags
		switch {
		case strings.Contains(flags, "S"):
			return fmt.Sprintf(" (%s runs with -S, which skips Python's site module: the hook gets in neither through PYTHONPATH nor through the .pth file of trt-action installed with pip)", text.Plain(a))
		case strings.Contains(flags, "I"), strings.Contains(flags, "E"):
			flag := "I"
			if !strings.Contains(flags, flag) {
				flag = "E"
			}
			return fmt.Sprintf(" (%s runs with -%s, which ignores PYTHONPATH, one way the hook enters; it keeps the hook out unless trt-action is installed with pip in that Python's environment, whose .pth file loads it under -%s too)", text.Plain(a), flag, flag)
		}
	}
	return " (it enters through PYTHONPATH and Python's site module, or through the .pth file of trt-action installed with pip in the program's Python environment: a command that is not Python, a Python started with -S, and one started with -I or -E or with PYTHONPATH cleared where trt-action is not pip-installed, are not observed)"
}

// leftoverWarning says how many processes the command left running when
// its main process exited (the reaper killed them).
// noSubreaperWarning says what a build without a subreaper could not
// promise: the kernel's reason is the reaper's own error text.
func noSubreaperWarning(why string) string {
	return "the kernel refused to make trt-action's reaper a child subreaper (prctl PR_SET_CHILD_SUBREAPER: " + why +
		"; qemu-user refuses it): a process of the command that detaches from it and loses its parent may outlive the build"
}

func leftoverWarning(n int) string {
	if n == 1 {
		return "1 process of the command still ran when its main process exited; it was killed"
	}
	return fmt.Sprintf("%d processes of the command still ran when its main process exited; they were killed", n)
}
