package report

import (
	"fmt"
	"html"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// fmtDur is a duration for progress and result lines: "12.3s" under a
// minute, "2m48s" above.
func fmtDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// fmtLimit is a duration compared with a budget: as precise as the limit
// needs ("30ms", "1.2s", "5m1s").
func fmtLimit(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// fmtDurCoarse is a duration in whole seconds, for headlines: "42s", "3m0s".
func fmtDurCoarse(d time.Duration) string {
	return max(0, d).Round(time.Second).String()
}

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

// cleanLine makes uncontrolled text one safe line: line breaks and tabs
// become spaces; other control characters and bidirectional overrides
// (which can make a log line read differently from what it is) are dropped.
func cleanLine(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r), isBidiControl(r):
			return -1
		}
		return r
	}, s)
}

func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F
}

// clip cuts s to n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// mdEscaper escapes Markdown punctuation that could change structure
// (tables, emphasis, links, code) and the HTML specials.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`,
	"~", `\~`, "#", `\#`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
)

// md is uncontrolled text for a Markdown table cell, heading or paragraph.
func md(s string) string { return mdEscaper.Replace(cleanLine(s)) }

// htmlText is uncontrolled text for inside an HTML element (<summary>,
// <pre>), where Markdown is not processed.
func htmlText(s string) string { return html.EscapeString(cleanLine(s)) }

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
	name := clip(strings.Join(strings.Fields(mapped), " "), 60)
	if name == "" {
		return "unnamed"
	}
	first, _, _ := strings.Cut(name, " ")
	if mermaidKeywords[strings.ToLower(first)] {
		name = "▸ " + name
	}
	return name
}
