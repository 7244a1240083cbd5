package text

import (
	"strconv"
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

// QuotedCut is text we do not control (a file's name from an entry, a
// media type a store served) as a message quotes it: cut to 80 runes,
// then quoted as Go quotes a string, so no control character or line end
// of it reaches the message. A manifest, a record or an entry's metadata
// may hold a string of any length in any field.
func QuotedCut(s string) string { return strconv.Quote(CutRunes(s, 80)) }

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
