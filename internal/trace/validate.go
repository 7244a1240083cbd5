package trace

import (
	"fmt"
	"strings"
)

// maxViolations caps the report: after the first few, later violations are
// usually consequences of the same mistake.
const maxViolations = 10

// violation is one broken rule, at the 1-based position of the event (the
// line number in a JSON Lines file).
type violation struct {
	Line int
	Msg  string
}

// validationError lists the first violations found and how many there were.
type validationError struct {
	Violations []violation // at most maxViolations
	Total      int
}

func (e *validationError) Error() string {
	var b strings.Builder
	for i, v := range e.Violations {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "line %d: %s", v.Line, v.Msg)
	}
	if more := e.Total - len(e.Violations); more > 0 {
		fmt.Fprintf(&b, "\n(and %d more)", more)
	}
	return b.String()
}

// Validate checks events against the IProgressMonitor contract: each event is
// well formed and in time order; a start's parent is running (or absent for a
// root) and its name is not already running; a step or finish names a running
// phase; a step lies in [0, nbSteps). It returns nil or a *validationError.
//
// It does not require steps to rise or phases to finish innermost first, and
// phases may still be running at the end (a trace of a killed build).
func Validate(events []Event) error {
	v := validator{running: map[string]int{}}
	for i, ev := range events {
		v.check(i+1, ev)
		if i > 0 && ev.T < events[i-1].T {
			v.report(i+1, "t_ms %s is before the previous event's %s (events must be in time order)",
				formatMillis(ev.T), formatMillis(events[i-1].T))
		}
	}
	if v.err.Total == 0 {
		return nil
	}
	return &v.err
}

type validator struct {
	running map[string]int // phase name -> nbSteps, for phases started and not finished
	err     validationError
}

func (v *validator) report(line int, format string, args ...any) {
	v.err.Total++
	if len(v.err.Violations) < maxViolations {
		v.err.Violations = append(v.err.Violations, violation{Line: line, Msg: fmt.Sprintf(format, args...)})
	}
}

func (v *validator) check(line int, ev Event) {
	if err := checkEvent(ev); err != nil {
		v.report(line, "%s", err)
		return
	}
	nbSteps, isRunning := v.running[ev.Phase]
	switch ev.Kind {
	case Start:
		if isRunning {
			v.report(line, "start of %q, which is already running (finish it first)", ev.Phase)
			return
		}
		if _, ok := v.running[ev.Parent]; ev.Parent != "" && !ok {
			v.report(line, "start of %q under parent %q, which is not running (parent must be running or null)", ev.Phase, ev.Parent)
		}
		v.running[ev.Phase] = ev.Steps
	case Step:
		if !isRunning {
			v.report(line, "step of %q, which is not running", ev.Phase)
		} else if ev.Step >= nbSteps {
			v.report(line, "step %d of %q is out of range [0, %d)", ev.Step, ev.Phase, nbSteps)
		}
	case Finish:
		if !isRunning {
			v.report(line, "finish of %q, which is not running", ev.Phase)
		}
		delete(v.running, ev.Phase)
	}
}
