package terminal

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trt-action/trt-action/internal/event"
)

// term is a terminal just capable enough to show what the view leaves on
// screen: it prints cells and wraps at the last column, and it knows the
// carriage return, the newline (as a tty sends it, CR LF), cursor up
// (ESC[nA), erase below (ESC[J) and colours (ignored). Like tmux it rewraps
// its lines when it narrows. It has no height: the top row is row 0.
type term struct {
	cols     int
	rows     [][]rune // cells of each row, padded with spaces
	wrapped  []bool   // the row goes on in the next one (an automatic wrap)
	row, col int
	// pendingWrap: the last column was just written; the next cell goes
	// to the next row, as in xterm and tmux.
	pendingWrap bool
}

func newTerm(cols int) *term {
	t := &term{cols: cols}
	t.addRow()
	return t
}

func (t *term) addRow() {
	t.rows = append(t.rows, []rune(strings.Repeat(" ", t.cols)))
	t.wrapped = append(t.wrapped, false)
}

func (t *term) Write(p []byte) (int, error) {
	s := string(p)
	for len(s) > 0 {
		if strings.HasPrefix(s, "\x1b[") {
			end := strings.IndexFunc(s[2:], func(r rune) bool { return r >= 0x40 && r <= 0x7e }) + 2
			t.csi(s[2:end], s[end])
			s = s[end+1:]
			continue
		}
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		switch r {
		case '\r':
			t.col, t.pendingWrap = 0, false
		case '\n':
			t.newline(false)
		default:
			t.put(r)
		}
	}
	return len(p), nil
}

func (t *term) csi(arg string, final byte) {
	switch final {
	case 'A':
		n, err := strconv.Atoi(arg)
		if err != nil {
			n = 1
		}
		t.row, t.pendingWrap = max(0, t.row-n), false
	case 'J':
		for c := t.col; c < t.cols; c++ {
			t.rows[t.row][c] = ' '
		}
		t.rows, t.wrapped = t.rows[:t.row+1], t.wrapped[:t.row+1]
		t.wrapped[t.row] = false
	}
}

func (t *term) newline(wrap bool) {
	t.wrapped[t.row] = wrap
	t.row, t.col, t.pendingWrap = t.row+1, 0, false
	if t.row == len(t.rows) {
		t.addRow()
	}
}

func (t *term) put(r rune) {
	if t.pendingWrap {
		t.newline(true)
	}
	t.rows[t.row][t.col] = r
	if t.col == t.cols-1 {
		t.pendingWrap = true
	} else {
		t.col++
	}
}

// resize changes the width and rewraps every line, keeping the cursor at
// the same place in its line.
func (t *term) resize(cols int) {
	var lines [][]rune
	var line []rune
	curLine, curOffset := 0, 0
	for i, row := range t.rows {
		if i == t.row {
			curLine, curOffset = len(lines), len(line)+t.col
		}
		line = append(line, row...)
		if !t.wrapped[i] {
			lines = append(lines, []rune(strings.TrimRight(string(line), " ")))
			line = nil
		}
	}
	*t = term{cols: cols}
	t.addRow()
	for i, l := range lines {
		if i > 0 {
			t.newline(false)
		}
		start := t.row
		for _, r := range l {
			t.put(r)
		}
		if i == curLine {
			t.row, t.col, t.pendingWrap = start+curOffset/cols, curOffset%cols, false
			for t.row >= len(t.rows) {
				t.addRow()
			}
		}
	}
}

// screen is what a person sees: rows without trailing blanks, blank rows
// at the bottom left off.
func (t *term) screen() string {
	var rows []string
	for _, r := range t.rows {
		rows = append(rows, strings.TrimRight(string(r), " "))
	}
	return strings.TrimRight(strings.Join(rows, "\n"), "\n") + "\n"
}

func TestTermModel(t *testing.T) {
	tm := newTerm(5)
	tm.Write([]byte("abcdefg\nxy\r\x1b[1A\x1b[Jz\n"))
	if got, want := tm.screen(), "abcde\nz\n"; got != want {
		t.Fatalf("after wrap, up and erase the screen is %q, want %q", got, want)
	}
	tm = newTerm(6)
	tm.Write([]byte("abcdef\nxy\n"))
	tm.resize(4)
	tm.Write([]byte("!"))
	if got, want := tm.screen(), "abcd\nef\nxy\n!\n"; got != want {
		t.Fatalf("after narrowing the screen is %q, want %q", got, want)
	}
}

// liveRun drives a view on tm at tm's width: a line above the live area
// (the shell's prompt), two builds whose headers fill the line, and a
// heartbeat every 100ms, then Ctrl-C. between runs after every
// frame of the heartbeats.
func liveRun(tm *term, between func(frame int)) (v *view, prompt string) {
	prompt = "$ trt-action build -f m.yml"
	tm.Write([]byte(prompt + "\n"))
	v = New(tm, Options{Width: func() int { return tm.cols }}).(*view)
	v.Handle(event.Event{Kind: event.RunStarted, Total: 2})
	v.Handle(started(0, 0, "resnet50-fp16-batch8-long-name-that-goes-on-and-on-and-on-and-on-and-on-and-on"))
	v.Handle(started(0, 1, "hangs-forever"))
	for i := 1; i <= 5; i++ {
		at := time.Duration(i) * 100 * time.Millisecond
		v.Handle(beat(at, 0, at, -1, "", ph("Building engine", 1, 6, at), ph("Timing graph nodes", i, 12, at/2)))
		v.Handle(beat(at, 1, at, -1, "", ph("Building engine", 4, 6, at), ph("Timing tactics", 0, 3, at)))
		between(i)
	}
	// Ctrl-C: the stopping state is drawn at once, from the whole state.
	v.Handle(event.Event{Kind: event.Stopping, At: 550 * time.Millisecond, Build: -1, Message: "SIGINT"})
	return v, prompt
}

// wantOnly checks that the screen holds the prompt and the view's newest
// frame and nothing else: no stale line of an older frame.
func wantOnly(t *testing.T, tm *term, v *view, prompt string) {
	t.Helper()
	want := prompt + "\n" + frame(renderFit(v.state, v.width(), v.height(), false))
	if got := tm.screen(); got != want {
		t.Errorf("the screen holds more than the newest frame\n--- screen ---\n%s--- want ---\n%s", got, want)
	}
}

// A key typed while the view runs, ^C above all, is echoed where the cursor
// waits below the live area. The next frame must still start in column 0,
// or its widest line wraps and an old line stays above the live area.
func TestEchoedKeysLeaveNoStaleLine(t *testing.T) {
	for _, cols := range []int{34, 80, 120} {
		tm := newTerm(cols)
		v, prompt := liveRun(tm, func(frame int) {
			if frame == 2 || frame == 4 {
				tm.Write([]byte("^C")) // the tty's echo
			}
		})
		wantOnly(t, tm, v, prompt)
	}
}

// When the terminal narrows, the lines already on screen wrap; the move
// back up must cover the rows they take now, not the lines drawn.
func TestResizeLeavesNoStaleLine(t *testing.T) {
	for _, c := range []struct{ from, to int }{{120, 50}, {100, 34}, {50, 120}} {
		tm := newTerm(c.from)
		v, prompt := liveRun(tm, func(frame int) {
			if frame == 3 {
				tm.resize(c.to)
			}
		})
		wantOnly(t, tm, v, prompt)
	}
}

func TestRowsTaken(t *testing.T) {
	for _, c := range []struct {
		widths    []int
		cols, out int
	}{
		{nil, 80, 0},
		{[]int{0, 79, 80}, 80, 3},
		{[]int{81, 33}, 80, 3},
		{[]int{99, 99, 10}, 34, 7},
	} {
		if got := rowsTaken(c.widths, c.cols); got != c.out {
			t.Errorf("rowsTaken(%v, %d) = %d, want %d", c.widths, c.cols, got, c.out)
		}
	}
}
