package text

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line makes text one safe line: invalid UTF-8 becomes U+FFFD, line breaks
// and tabs become spaces, and other control characters and bidirectional
// controls are dropped. A control character could move a terminal's cursor
// or start an escape sequence; a bidirectional override makes a line read
// differently from what it is ("Trojan Source").
func Line(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unsafeRune(r):
			return -1
		}
		return r
	}, valid(s))
}

// lines is Line for text whose line breaks mean something (a failure body
// in JUnit): \r\n and \r become \n, tabs become spaces, and everything
// else Line drops is dropped.
func lines(s string) string {
	s = strings.ReplaceAll(valid(s), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case unsafeRune(r):
			return -1
		}
		return r
	}, s)
}

func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// unsafeRune is a control character or a bidirectional control.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || IsBidiControl(r)
}

// IsBidiControl reports whether r is one of Unicode's explicit
// bidirectional formatting characters (embeddings, overrides, isolates and
// the marks), the ones that can reorder how a line is displayed. Exported
// for github's fuzz test, which checks rendered text holds none.
func IsBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}

// Escaped shows control and bidirectional characters as Go escapes
// ("\x1b", "\u202e") and leaves the rest as it is: for messages that quote
// text back to whoever wrote it (a matrix file's errors and plan), who
// needs to see what is there to fix it, on one line that moves no cursor.
func Escaped(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 && utf8.ValidString(s) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
