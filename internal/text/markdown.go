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
// issue references (#123, GH-123, user#123, owner/repo#123). It also
// breaks HTML character references (&commat;, &#x40;): plain text (JUnit,
// annotations) may be shown as HTML by another tool, which would decode
// them into a live "@" or "#".
//
// It breaks them exactly where GitHub's own patterns match, so that a file
// path or a name that merely holds the signs passes unchanged. GitHub's
// rendering is not public; its rules are the patterns of the filters
// GitHub extracted into html-pipeline (github.com/gjtorikian/html-pipeline),
// whose reference forms GitHub's documentation lists ("Autolinked
// references and URLs", docs.github.com/en/get-started/writing-on-github/
// working-with-advanced-formatting/autolinked-references-and-urls):
//
//   - a user mention (lib/html_pipeline/node_filter/mention_filter.rb,
//     MENTION_PATTERNS): "@" at the start or after a character that is not
//     a letter, digit or "_"; a name of letters, digits and "-" that starts
//     with a letter or digit; not followed by "/"; followed by the end, by
//     a character that is neither a word character nor ".", or by dots
//     that are not followed by a word character ("@octocat." is one,
//     "@team.engine" is not, nor is "model@2x");
//   - a team mention (lib/html_pipeline/node_filter/team_mention_filter.rb,
//     TEAM_PATTERN): the same "@" and organisation name, "/", and a team
//     name that starts with a letter or digit ("@org/team"; "@o/#1" is
//     neither kind);
//   - an issue reference (lib/github/html/issue_mention_filter.rb, at
//     commit 3200d912, replace_bare_issue_mentions and
//     replace_repo_issue_mentions): "#" or "GH-" (any case) and digits
//     that end a word ("#12a" is none), either at the start or after a
//     character that is not a word character ("(#12)", "out/#12/",
//     "high-1" is no "GH-"), or "#" right after a word that may name a
//     user or repository ("user#12", "owner/repo#12"): letters, digits,
//     "_", "-" and ".", with at most one "/" and no "." before it, at the
//     start or after white space, "(", "[" or "{".
//
// A word character is an ASCII letter or digit or "_", as in those Ruby
// patterns; a character outside ASCII is none. Each live sign is broken
// right after it, which breaks every pattern.
//
// Neutral cannot know what a renderer writes around s, so at either end it
// takes what would make a match: s may start right after a word
// ("trt-action." + ".000#00" is a reference to a repository's issue, so
// ".000#00" is broken), and a team name may follow a "/" that ends it.
// Within s it tries each pattern at every place: where a user mention's
// name ends in "-" and an "@" follows ("@a-@b"), GitHub's one pass of the
// pattern links only the first, as its match takes the "-" the second
// needs before it; both are broken, the safe side. A named character
// reference ends with ";" ("a&b" is none; "&#" always starts one).
func Neutral(s string) string {
	if !strings.ContainsAny(s, "@#-&") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if live(s, i) {
			b.WriteString(breaker)
		}
	}
	return b.String()
}

// live reports whether s[i] is the sign of a mention or reference GitHub
// would make of s (see Neutral), or the "&" of a character reference.
func live(s string, i int) bool {
	if i+1 == len(s) {
		return false
	}
	switch s[i] {
	case '@':
		return mentionAt(s, i)
	case '#':
		return issueAt(s, i)
	case '-':
		return i >= 2 && strings.EqualFold(s[i-2:i], "gh") && wordStart(s, i-2) && numberEndsWord(s, i+1)
	case '&':
		return s[i+1] == '#' || namedReference(s[i+1:])
	}
	return false
}

// mentionAt reports whether the "@" at s[i] starts a user or team mention.
func mentionAt(s string, i int) bool {
	if !wordStart(s, i) || !isAlnum(s[i+1]) {
		return false
	}
	end := i + 1 // the name: letters, digits and "-", taken whole
	for end < len(s) && (isAlnum(s[end]) || s[end] == '-') {
		end++
	}
	switch {
	case end == len(s):
		return true
	case s[end] == '/': // no user, but maybe a team (after s, if s ends here)
		return end+1 == len(s) || isAlnum(s[end+1])
	case s[end] == '.':
		dots := end
		for dots < len(s) && s[dots] == '.' {
			dots++
		}
		// "\.+[ \t\W]|\.+$": a second dot is itself a non-word character.
		return dots-end > 1 || dots == len(s) || !isWord(s[dots])
	}
	return !isWord(s[end])
}

// issueAt reports whether the "#" at s[i] starts an issue reference: bare
// (#12) or after a user or repository (user#12, owner/repo#12).
func issueAt(s string, i int) bool {
	if !numberEndsWord(s, i+1) {
		return false
	}
	if wordStart(s, i) {
		return true
	}
	from := i // the word before "#", and what may precede it
	for from > 0 && (isWord(s[from-1]) || strings.IndexByte(".-/", s[from-1]) >= 0) {
		from--
	}
	if from > 0 {
		return strings.IndexByte(" \t\n\r\f\v([{", s[from-1]) >= 0 && repositoryName(s[from:i], false)
	}
	return repositoryName(s[:i], true)
}

// repositoryName reports whether w may name a user or a repository before
// an issue number: a first part of letters, digits, "_" and "-", then
// optionally "/" and a part that may also hold ".", or, without "/",
// further letters, digits, "_", "-" and ".". A tail (w starts s: a word
// may stand before it) needs only to end such a name.
func repositoryName(w string, tail bool) bool {
	owner, repo, slashed := strings.Cut(w, "/")
	if !slashed {
		owner, repo = w, ""
		if dot := strings.IndexByte(w, '.'); dot >= 0 {
			owner, repo = w[:dot], w[dot:]
		}
	}
	return (owner != "" || tail) && !strings.ContainsAny(owner, ".") && !strings.ContainsAny(repo, "/")
}

// numberEndsWord reports whether s[j:] starts with digits that end a word
// (a regular expression's "\d+\b"): the byte after them is not a letter,
// a digit or "_".
func numberEndsWord(s string, j int) bool {
	if j >= len(s) || !isDigit(s[j]) {
		return false
	}
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return j == len(s) || !isWord(s[j])
}

// wordStart reports whether s[i] starts a word: it is the first byte, or
// the byte before it is not a letter, a digit or "_".
func wordStart(s string, i int) bool {
	return i == 0 || !isWord(s[i-1])
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

// isWord reports whether c is a word character of the patterns above
// (ASCII, as Ruby's "\w" is): a letter, a digit or "_". Every byte of a
// character outside ASCII is not.
func isWord(c byte) bool { return isAlnum(c) || c == '_' }

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
