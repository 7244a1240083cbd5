package text

import (
	"html"
	"strings"
)

// breaker is the zero-width space (U+200B). Put between "@" and a name, or
// between "#" and a number, it breaks GitHub's mention and reference
// patterns, which want the name or number right after the sign, and it is
// invisible: "fix-@octocat" still reads "fix-@octocat". A backslash escape
// ("\@", "\#") does not do that: GitHub links mentions and references after
// rendering, in text where the escape has already become "@" again
// (github/markup#1168, github/cmark-gfm#181, which both show the zero-width
// space working).
const breaker = "\u200b"

// Neutral breaks what GitHub would turn into a notification or a link to
// somebody else's issue: mentions of users and teams (@user, @org/team) and
// references (#123, GH-123, owner/repo#123). It also breaks HTML character
// references (&commat;, &#x40;): plain text (JUnit, annotations) may be
// shown as HTML by another tool, which would decode them into a live "@".
// It breaks them only where they are what they look like, so that a file
// path or a name that merely holds the signs passes unchanged: a mention
// starts a word (GitHub's mention pattern wants the "@" at the start or
// after a character that is not a letter, digit or "_": "model@2x" and
// "a@b.c" are not mentions; github.com/gjtorikian/html-pipeline,
// lib/html/pipeline/mention_filter.rb, MentionPattern), as does "GH-"
// ("high-1" is no reference), and a named character reference ends with
// ";" ("a&b" is none; "&#" always starts one).
// It stays exported although only this package calls it today: it is the one
// mention neutraliser for a renderer that escapes text its own way.
func Neutral(s string) string {
	if !strings.ContainsAny(s, "@#-&") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		if i+1 == len(s) {
			break
		}
		next := s[i+1]
		switch {
		case c == '@' && isAlnum(next) && wordStart(s, i),
			c == '#' && isDigit(next),
			c == '&' && (next == '#' || namedReference(s[i+1:])),
			c == '-' && isDigit(next) && i >= 2 && strings.EqualFold(s[i-2:i], "gh") && wordStart(s, i-2):
			b.WriteString(breaker)
		}
	}
	return b.String()
}

// wordStart reports whether s[i] starts a word: it is the first byte, or
// the byte before it is not a letter, a digit or "_".
func wordStart(s string, i int) bool {
	return i == 0 || !(isAlnum(s[i-1]) || s[i-1] == '_')
}

// namedReference reports whether s (what follows an "&") is the name of a
// character reference: letters and digits, then ";".
func namedReference(s string) bool {
	n := 0
	for n < len(s) && isAlnum(s[n]) {
		n++
	}
	return n > 0 && n < len(s) && s[n] == ';'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// markdownEscaper escapes what could change a line's Markdown structure
// (table pipes, emphasis, links, code, strike-through, headings, maths) and
// the HTML specials, so text reads literally in a table cell, a heading, a
// list item or a paragraph.
var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`,
	"~", `\~`, "#", `\#`, "$", `\$`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
)

// Markdown is uncontrolled text for a Markdown table cell, heading, list
// item or paragraph: one line, neutral, escaped.
func Markdown(s string) string { return markdownEscaper.Replace(Neutral(Line(s))) }

// HTML is uncontrolled text for inside an HTML element (<summary>, <pre>,
// <sub>), where GitHub does not process Markdown but still links mentions.
func HTML(s string) string { return html.EscapeString(Neutral(Line(s))) }

// Plain is uncontrolled text for a plain-text field another tool may show
// on GitHub (a JUnit name or message, a check-run annotation): one line,
// neutral, not escaped.
func Plain(s string) string { return Neutral(Line(s)) }

// PlainLines is Plain for text whose line breaks mean something (a JUnit
// failure body).
func PlainLines(s string) string { return Neutral(lines(s)) }
