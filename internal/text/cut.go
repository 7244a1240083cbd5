package text

import (
	"strings"
	"unicode/utf8"
)

// ellipsis marks where text was cut.
const ellipsis = "…"

// CutRunes shortens s to at most n runes, the last of them ellipsis when
// anything was cut. Runes, not bytes, so a cut never splits a character.
func CutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i, kept := 0, 0
	for kept < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		kept++
	}
	return s[:i] + ellipsis
}

// CutAtLine returns the longest prefix of s of at most n bytes that ends at
// a line end (or s itself when it fits). When not even the first line fits,
// it returns "": a partial line could leave a construct (a table row, an
// HTML tag) open, a missing one cannot.
func CutAtLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := strings.LastIndexByte(s[:n], '\n')
	return s[:i+1]
}
