// Package texttest finds what GitHub would make live in a text: the
// mentions and issue references of GitHub's patterns, restated for RE2
// another way than text.Neutral finds them, for the tests that check text
// stays inert. Only tests import it.
package texttest

import (
	"regexp"
	"strings"
)

// GitHub's patterns (text.Neutral names their sources), restated for RE2,
// which has no look-around: each is matched at one sign, with the byte
// before it checked apart. A name is followed by a byte that cannot
// continue it ("-" included), so RE2's backtracking cannot shorten it, as
// the original's atomic group forbids.
var (
	userMention = regexp.MustCompile(`^@[A-Za-z0-9][A-Za-z0-9-]*(?:\.+[^A-Za-z0-9_]|\.+$|[^A-Za-z0-9_./-]|$)`)
	teamMention = regexp.MustCompile(`^@[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9][A-Za-z0-9_-]*\b`)
	bareIssue   = regexp.MustCompile(`^(?:[Gg][Hh]-|#)[0-9]+\b`)
	repoIssue   = regexp.MustCompile(`^[A-Za-z0-9_-]+/?[.A-Za-z0-9_-]*#[0-9]+\b`)
	// leaders may stand before a repository's issue reference.
	leaders = " \t\n\r\f\v([{"
)

// Live is a mention or reference GitHub would make of a text.
type Live struct {
	At   int    // the offset of its sign: "@", "#", or the "-" of "GH-"
	Text string // what it is, as matched
}

// LiveIn lists the mentions and references GitHub would make of s, each
// pattern tried at every place (GitHub's one pass of each can miss a
// match right after another, which is no reason to leave it live).
func LiveIn(s string) []Live {
	var live []Live
	for i := range len(s) {
		afterWord := i > 0 && isWord(s[i-1])
		if !afterWord {
			for _, re := range []*regexp.Regexp{userMention, teamMention, bareIssue} {
				if m := re.FindString(s[i:]); m != "" {
					at := i
					if m[0] != '@' && m[0] != '#' {
						at += 2 // the "-" of GH-
					}
					live = append(live, Live{At: at, Text: m})
				}
			}
		}
		if i == 0 || strings.IndexByte(leaders, s[i-1]) >= 0 {
			if m := repoIssue.FindString(s[i:]); m != "" {
				live = append(live, Live{At: i + strings.IndexByte(m, '#'), Text: m})
			}
		}
	}
	return live
}

// isWord is a word character of the patterns (ASCII, as Ruby's \w).
func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
