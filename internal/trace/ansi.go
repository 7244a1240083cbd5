package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// ConvertANSI reconstructs the callbacks behind a terminal recording of
// NVIDIA's sample progress monitor, which redraws every running phase after
// each callback:
//
//	ESC[0G                              start of a redraw
//	ESC[2K <depth spaces>[bar] name c/N  one row per running phase, outermost first
//	ESC[2K                              an empty row after a phaseFinish, erasing the old one
//	ESC[nA                              cursor back up over the n rows
//
// The printed count is the step argument of the last stepComplete (0 right
// after phaseStart), so in the NVIDIA recording a phase's count reaches
// nbSteps-1, never nbSteps, and the first stepComplete(0) redraws a frame
// identical to the one phaseStart drew. Consecutive frames are diffed:
// a vanished row is a finish, a new row a start (its parent is the row one
// level shallower above it), a changed count a step, and an unchanged frame
// a repeated step of the innermost phase. Text outside frames (log lines,
// headers) is skipped. Recordings carry no thread or time, so every event
// has Thread 1 and T 0. The result always passes Validate.
func ConvertANSI(r io.Reader) ([]Event, error) {
	var p ansiParser
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		text, err := br.ReadString('\n')
		if perr := p.feedLine(line, strings.TrimSuffix(text, "\n")); perr != nil {
			return nil, perr
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ansi:%d: %w", line, err)
		}
	}
	if err := p.endFrame(); err != nil {
		return nil, err
	}
	if len(p.conv.events) == 0 {
		return nil, errors.New("ansi: no progress rows found (want ESC[0G followed by ESC[2K [bar] name step/nbSteps rows)")
	}
	if err := Validate(p.conv.events); err != nil {
		return nil, fmt.Errorf("ansi: reconstructed events break the monitor contract:\n%w", err)
	}
	return p.conv.events, nil
}

// row is one drawn line of a frame.
type row struct {
	line  int // where it was drawn, for errors
	text  string
	depth int
	name  string
	count int
	steps int
}

// ansiParser splits the byte stream into frames of rows.
type ansiParser struct {
	inFrame bool
	rowOpen bool // an ESC[2K row is collecting text until the newline
	rows    []row
	conv    converter
}

// csi matches the control sequences the monitor emits (and any other CSI, to
// skip it): ESC [ parameters final-byte.
var csi = regexp.MustCompile("\x1b\\[([0-9;]*)([@-~])")

func (p *ansiParser) feedLine(line int, text string) error {
	for text != "" {
		loc := csi.FindStringSubmatchIndex(text)
		if loc == nil {
			p.addText(text)
			break
		}
		p.addText(text[:loc[0]])
		if err := p.control(line, text[loc[4]:loc[5]]); err != nil {
			return err
		}
		text = text[loc[1]:]
	}
	p.rowOpen = false // a row ends at the newline; later text there is a log line
	return nil
}

func (p *ansiParser) addText(s string) {
	if p.inFrame && p.rowOpen {
		p.rows[len(p.rows)-1].text += s
	}
}

func (p *ansiParser) control(line int, final string) error {
	switch final {
	case "G": // the monitor's redraw starts at column 0
		if err := p.endFrame(); err != nil {
			return err
		}
		p.inFrame = true
	case "K": // each row starts by clearing its line
		if p.inFrame {
			p.rows = append(p.rows, row{line: line})
			p.rowOpen = true
		}
	case "A": // moving back up ends the redraw
		return p.endFrame()
	}
	return nil
}

func (p *ansiParser) endFrame() error {
	if !p.inFrame {
		return nil
	}
	rows := p.rows
	p.inFrame, p.rowOpen, p.rows = false, false, nil
	return p.conv.frame(rows)
}

// rowPattern is indent, a bar of '=' and '-', the phase name, step/nbSteps.
var rowPattern = regexp.MustCompile(`^( *)\[[=-]*\] (.+) ([0-9]{1,10})/([0-9]{1,10})$`)

func parseRow(r row) (row, error) {
	m := rowPattern.FindStringSubmatch(strings.TrimRight(r.text, " \r"))
	if m == nil {
		return r, fmt.Errorf("ansi:%d: cannot read progress row %q (want [bar] name step/nbSteps)", r.line, r.text)
	}
	r.depth, r.name = len(m[1]), m[2]
	r.count, _ = strconv.Atoi(m[3]) // at most 10 digits: fits an int
	r.steps, _ = strconv.Atoi(m[4])
	switch {
	case r.steps <= 0 || r.steps > 1<<31-1:
		return r, fmt.Errorf("ansi:%d: phase %q has nbSteps %d (want 1 to 2147483647)", r.line, r.name, r.steps)
	case r.count >= r.steps:
		return r, fmt.Errorf("ansi:%d: phase %q shows step %d of %d (want a step below nbSteps)", r.line, r.name, r.count, r.steps)
	}
	return r, nil
}

// converter turns successive frames into events.
type converter struct {
	active []row // rows of the previous frame, outermost first
	events []Event
}

func (c *converter) emit(ev Event) {
	ev.Thread = 1
	c.events = append(c.events, ev)
}

func (c *converter) frame(drawn []row) error {
	cur, blanks, err := parseRows(drawn)
	if err != nil {
		return err
	}
	before := len(c.events)
	prev := indexByName(c.active)
	now := indexByName(cur)
	// Finish first, innermost first, so that a name finished and restarted
	// within one frame is never running twice.
	for i := len(c.active) - 1; i >= 0; i-- {
		if old := c.active[i]; !samePhase(old, cur, now) {
			c.emit(Event{Kind: Finish, Phase: old.name})
		}
	}
	for i, r := range cur {
		old, kept := prev[r.name]
		if kept && samePhase(c.active[old], cur, now) {
			if r.count != c.active[old].count {
				c.emit(Event{Kind: Step, Phase: r.name, Step: r.count})
			}
			continue
		}
		c.emit(Event{Kind: Start, Phase: r.name, Parent: parentOf(cur, i), Steps: r.steps})
		if r.count > 0 {
			c.emit(Event{Kind: Step, Phase: r.name, Step: r.count})
		}
	}
	if len(c.events) == before && blanks == 0 && len(cur) > 0 {
		c.repeatStep(cur)
	}
	c.active = cur
	return nil
}

// repeatStep explains a redraw that changed nothing: a stepComplete that
// repeated the shown count. In the recording that is always the first
// stepComplete(0) of the phase just started, which is the innermost one, and
// the header says steps come from the innermost running phase.
func (c *converter) repeatStep(cur []row) {
	inner := cur[len(cur)-1]
	c.emit(Event{Kind: Step, Phase: inner.name, Step: inner.count})
}

func parseRows(drawn []row) (rows []row, blanks int, err error) {
	seen := map[string]bool{}
	for _, r := range drawn {
		if strings.TrimSpace(r.text) == "" {
			blanks++
			continue
		}
		r, err := parseRow(r)
		if err != nil {
			return nil, 0, err
		}
		if seen[r.name] {
			return nil, 0, fmt.Errorf("ansi:%d: phase %q is drawn twice in one frame (running phase names are unique)", r.line, r.name)
		}
		seen[r.name] = true
		rows = append(rows, r)
	}
	return rows, blanks, nil
}

func indexByName(rows []row) map[string]int {
	idx := make(map[string]int, len(rows))
	for i, r := range rows {
		idx[r.name] = i
	}
	return idx
}

// samePhase reports whether old is still drawn in cur as the same phase: the
// same name at the same depth with the same nbSteps. A name that comes back
// different was finished and started again.
func samePhase(old row, cur []row, idx map[string]int) bool {
	i, ok := idx[old.name]
	return ok && cur[i].depth == old.depth && cur[i].steps == old.steps
}

// parentOf is the nearest row above cur[i] drawn one level shallower; a row
// with none is taken as a root.
func parentOf(cur []row, i int) string {
	for j := i - 1; j >= 0; j-- {
		if cur[j].depth < cur[i].depth {
			return cur[j].name
		}
	}
	return ""
}
