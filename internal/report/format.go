package report

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/trt-action/trt-action/internal/text"
)

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// fmtBytes is a size in decimal units: "12.3 MB".
func fmtBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, "kMGT"[i])
}

func percent(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// mermaidKeywords start statements in a gantt chart; a task or section named
// like one would be read as that statement.
var mermaidKeywords = map[string]bool{
	"gantt": true, "title": true, "section": true, "dateformat": true, "axisformat": true,
	"tickinterval": true, "includes": true, "excludes": true, "todaymarker": true,
	"inclusiveenddates": true, "topaxis": true, "weekday": true, "weekend": true,
	"acctitle": true, "accdescr": true, "click": true, "call": true, "href": true,
}

// mermaidName reduces uncontrolled text to a gantt task or section name:
// letters, digits, spaces and ". , _ - + = / ( )" survive; ':' ';' '#' '%'
// and anything else that could end or comment a statement become spaces.
func mermaidName(s string) string {
	mapped := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-+=/() ", r) {
			return r
		}
		return ' '
	}, s)
	name := text.CutRunes(strings.Join(strings.Fields(mapped), " "), 60)
	if name == "" {
		return "unnamed"
	}
	first, _, _ := strings.Cut(name, " ")
	if mermaidKeywords[strings.ToLower(first)] {
		name = "▸ " + name
	}
	return name
}
