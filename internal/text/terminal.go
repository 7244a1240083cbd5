package text

import "strings"

// Shown is what a terminal would show of one line a program printed: the
// text after its last carriage return (a progress bar that redraws itself,
// as tqdm's does, leaves its last state, not every frame joined into one
// line), without ANSI escape sequences (colours, cursor moves: CSI
// "ESC [ ... final", OSC "ESC ] ... BEL or ESC \", and the others, ESC (
// intermediates) final).
// It keeps everything else, control characters included: the views make
// the result safe (Line, Markdown, the workflow-command fence).
func Shown(s string) string {
	if i := strings.LastIndexByte(strings.TrimRight(s, "\r"), '\r'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimRight(s, "\r")
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			b.WriteByte(s[i])
			continue
		}
		i = escapeEnd(s, i)
	}
	return b.String()
}

// escapeEnd is the index of the last byte of the escape sequence that
// starts at s[i] (an ESC).
func escapeEnd(s string, i int) int {
	if i+1 >= len(s) {
		return i
	}
	switch s[i+1] {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40-0x7E
		for j := i + 2; j < len(s); j++ {
			if s[j] >= 0x40 && s[j] <= 0x7e {
				return j
			}
		}
		return len(s) - 1
	case ']': // OSC: up to BEL or ESC \
		for j := i + 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 1
			}
		}
		return len(s) - 1
	}
	// Any other: intermediates (0x20-0x2F, as in ESC ( B), then a final byte.
	j := i + 1
	for j < len(s)-1 && s[j] >= 0x20 && s[j] <= 0x2f {
		j++
	}
	return j
}
