package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// How every view words a build that ran a command (a script build), so the
// summary, JUnit, the annotations, the log lines and the terminal say the
// same thing the same way.

// The live views (log lines, the terminal, the event stream) show the
// first LiveOutputLines lines a script build's command prints as they
// come, each cut to OutputLineRunes (OutputLine); they count the rest and,
// when the build ends, show the last of them from the report's tail
// (ElidedOutput). A program may print
// megabytes; the log must not, and the report keeps the tail anyway.
const (
	LiveOutputLines = 1_000
	OutputLineRunes = 1_000
)

// OutputLine is a line a command printed as the live views show it: cut
// to OutputLineRunes.
func OutputLine(line string) string { return text.CutRunes(line, OutputLineRunes) }

// ExitText is how the command ended, short: "exit 0", "exit 1", or for a
// command a signal ended or that never started its own words ("killed by
// signal SIGABRT"), cut.
func ExitText(s *Script) string {
	switch {
	case s.ExitCode != nil:
		return fmt.Sprintf("exit %d", *s.ExitCode)
	case s.Exit == "":
		return "no exit status"
	}
	return text.CutRunes(s.Exit, 60)
}

// CommandText is the command as one line of words, for people: its words
// joined by spaces (the report's "command" has them exactly), cut.
func CommandText(s *Script) string {
	return text.CutRunes(text.ShellLine(s.Command), 200)
}

// InnerCount says how many TensorRT builds a script build ran: "2 TensorRT
// builds", or "no TensorRT build seen".
func InnerCount(b *Build) string {
	if len(b.TensorRTBuilds) == 0 {
		return "no TensorRT build seen"
	}
	return text.Count(len(b.TensorRTBuilds), "TensorRT build")
}

// ScriptNote is a script build in a few words: "exit 0 · 2 TensorRT
// builds", "exit 0 · no TensorRT build seen"; "" for a build that ran no
// command.
func ScriptNote(b *Build) string {
	if b.Script == nil {
		return ""
	}
	return ExitText(b.Script) + " · " + InnerCount(b)
}

// InnerProgress says where a running script build is among the TensorRT
// builds it runs, from a heartbeat's counts: inner is the TensorRT build
// whose phases the view shows (0: none runs), running how many run and
// done how many ended. It is "TensorRT build 2" and, a view's to leave out
// where room is short, " of 2 so far" (", 3 running" when more run at
// once); between TensorRT builds "running the command" and ", 1 TensorRT
// build done". "" for a build not known to run a command (script false,
// and no TensorRT build seen).
func InnerProgress(inner, running, done int, script bool) (words, more string) {
	switch {
	case inner > 0:
		more = fmt.Sprintf(" of %d so far", running+done)
		if running > 1 {
			more += fmt.Sprintf(", %d running", running)
		}
		return fmt.Sprintf("TensorRT build %d", inner), more
	case done > 0:
		return "running the command", ", " + text.Count(done, "TensorRT build") + " done"
	case script:
		return "running the command", ""
	}
	return "", ""
}

// InnerLabel names TensorRT build k of a script build where a build's
// name stands (a regression, a row of the baseline table): "yolo-export #2".
func InnerLabel(build string, k int) string { return fmt.Sprintf("%s #%d", build, k) }

// InnerText is one TensorRT build in a line: "TensorRT build 1: ok in
// 18.0s · 12.3 MB · python route · pid 4711", or "TensorRT build 2:
// budget-exceeded after 15.0s · python route · pid 4711: phase … over its
// 10s limit".
func InnerText(t *TensorRTBuild) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "TensorRT build %d: %s", t.Index, t.Status)
	if Succeeded(t.Status) {
		sb.WriteString(" in " + text.DurationMs(t.DurationMs))
	} else {
		sb.WriteString(" after " + text.DurationMs(t.DurationMs))
	}
	if t.SerializedBytes > 0 {
		sb.WriteString(" · " + text.Bytes(t.SerializedBytes))
	}
	if t.Route != "" {
		sb.WriteString(" · " + t.Route + " route")
	}
	if t.PID > 0 {
		fmt.Fprintf(&sb, " · pid %d", t.PID)
	}
	if peak := MemoryPeakText(t.Memory); peak != "" {
		sb.WriteString(" · " + peak)
	}
	if reason := innerReason(t); reason != "" {
		sb.WriteString(": " + reason)
	}
	return sb.String()
}

// innerReason is why a TensorRT build ended as it did: its reason, or
// without one the limit it hit.
func innerReason(t *TensorRTBuild) string {
	if t.Reason == "" && t.Budget != nil {
		return BudgetText(t.Budget)
	}
	return t.Reason
}

// Annotations quote at most this many of a script build's TensorRT builds
// and lines of output.
const (
	detailInnerBuilds = 5
	detailOutputLines = 5
)

// ScriptDetail is what an annotation of a script build that did not
// succeed says beside its reason, a line each: how the command ended, the
// TensorRT builds inside that did not succeed, and its last lines of
// output. nil for a build that ran no command.
func ScriptDetail(b *Build) []string {
	s := b.Script
	if s == nil {
		return nil
	}
	lines := []string{fmt.Sprintf("command %s: %s; %s", CommandText(s), cmp.Or(s.Exit, ExitText(s)), InnerCount(b))}
	if s.Unobserved != "" {
		lines = append(lines, "not observed: "+s.Unobserved)
	}
	shown, more := 0, 0
	for i := range b.TensorRTBuilds {
		t := &b.TensorRTBuilds[i]
		if Succeeded(t.Status) {
			continue
		}
		if shown == detailInnerBuilds {
			more++
			continue
		}
		shown++
		lines = append(lines, InnerText(t))
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("… and %s that did not succeed", text.Count(more, "more TensorRT build")))
	}
	if tail := s.OutputTail; len(tail) > 0 {
		lines = append(lines, "last lines of output:")
		for _, l := range tail[max(0, len(tail)-detailOutputLines):] {
			lines = append(lines, "  "+text.CutRunes(l, 300))
		}
	}
	return lines
}

// OutputCutNote is what a live view says after the first LiveOutputLines
// lines of a command's output.
func OutputCutNote() string {
	return fmt.Sprintf("… more output than the %d lines shown as it comes; its last lines follow when the build ends", LiveOutputLines)
}

// ElidedOutput is what a live view that showed the first LiveOutputLines
// lines of a script build's output shows when the build ends, if the
// command printed more (printed lines in all): how many it left out, and
// the last of them from the report's tail, each an OutputLine.
func ElidedOutput(s *Script, printed int) []string {
	dropped := printed - LiveOutputLines
	if s == nil || dropped <= 0 {
		return nil
	}
	tail := s.OutputTail[max(0, len(s.OutputTail)-dropped):]
	note := "… the rest of the output:"
	if left := dropped - len(tail); left > 0 {
		note = fmt.Sprintf("… %s of output not shown; the last %d:", text.Count(left, "line"), len(tail))
	}
	lines := []string{note}
	for _, l := range tail {
		lines = append(lines, OutputLine(l))
	}
	return lines
}
