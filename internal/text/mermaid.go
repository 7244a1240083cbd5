package text

import (
	"strings"
	"unicode"
)

// mermaidKeywords start statements in a gantt chart; a task or section named
// like one would be read as that statement.
var mermaidKeywords = map[string]bool{
	"gantt": true, "title": true, "section": true, "dateformat": true, "axisformat": true,
	"tickinterval": true, "includes": true, "excludes": true, "todaymarker": true,
	"inclusiveenddates": true, "topaxis": true, "weekday": true, "weekend": true,
	"acctitle": true, "accdescr": true, "click": true, "call": true, "href": true,
}

// MermaidName reduces uncontrolled text to a gantt task or section name:
// letters, digits, spaces and ". , _ - + = / ( )" survive; ':' ';' '#' '%'
// and anything else that could end or comment a statement become spaces.
func MermaidName(s string) string {
	mapped := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-+=/() ", r) {
			return r
		}
		return ' '
	}, s)
	name := CutRunes(strings.Join(strings.Fields(mapped), " "), 60)
	if name == "" {
		return "unnamed"
	}
	first, _, _ := strings.Cut(name, " ")
	if mermaidKeywords[strings.ToLower(first)] {
		name = "▸ " + name
	}
	return name
}
