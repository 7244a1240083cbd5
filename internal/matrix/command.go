package matrix

import (
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// A build's run: string is split into the command's words as a POSIX
// shell splits a simple command, without running one (POSIX.1-2024,
// Shell Command Language: 2.2 Quoting, 2.3 Token Recognition, 2.6.7 Quote
// Removal; https://pubs.opengroup.org/onlinepubs/9799919799/utilities/V3_chap02.html):
// blanks separate words; a backslash keeps the next character as it is,
// and with a newline continues the line; 'single quotes' keep everything;
// in "double quotes" a backslash escapes only $ ` " \ and a newline; # at
// a word's start begins a comment to the end of the line. Where a shell
// would do more, the splitter says so at the place, as nothing else would
// tell: a shell's operators (| & ; < > ( )), a second command on a line of
// its own, command substitution ($(...), `...`) and NAME=value before the
// command are errors; a parameter ($NAME, ${NAME}, $1) and a leading ~
// are passed as written, with a warning. Globs (* ? [...]) are passed as
// written too, which is what a shell does when no file matches them.
//
// The splitter is ours, not a shell parser's (mvdan.cc/sh's syntax
// package parses all of a shell's grammar, which run: would then have to
// walk to refuse most of): it needs the offset of each problem, for
// FILE:LINE:COL, and refuses more than it splits. FuzzSplitCommand checks
// it against /bin/sh.

// commandIssue is a problem of a run: string, at a byte offset of it.
type commandIssue struct {
	at   int
	msg  string
	warn bool // the word is passed as written; the file is still valid
}

// splitter splits one string; the first error ends it.
type splitter struct {
	s      string
	i      int
	words  []string
	cur    strings.Builder
	inWord bool
	start  int  // where the current word began
	first  int  // where the first word began
	ended  bool // a newline ended a command
	failed bool
	issues []commandIssue
}

// splitCommand splits s into words as described above.
func splitCommand(s string) ([]string, []commandIssue) {
	p := split(s)
	return p.words, p.issues
}

// split is splitCommand's work, with where the first word began.
func split(s string) *splitter {
	p := &splitter{s: s}
	for p.i < len(s) && !p.failed {
		switch c := s[p.i]; {
		case c == ' ' || c == '\t':
			p.endWord()
			p.i++
		case c == '\n':
			p.endWord()
			p.ended = p.ended || len(p.words) > 0
			p.i++
		case c == '#' && !p.inWord:
			if end := strings.IndexByte(s[p.i:], '\n'); end >= 0 {
				p.i += end
			} else {
				p.i = len(s)
			}
		case c == '\\':
			p.backslash()
		case c == '\'':
			p.singleQuoted()
		case c == '"':
			p.doubleQuoted()
		case c == '$':
			p.dollar(false)
		case c == '`':
			p.fail(p.i, "`...` is command substitution, which needs a shell ("+inShell+" runs one)")
		case strings.IndexByte(operators, c) >= 0:
			p.operator()
		default:
			if c == '~' && !p.inWord {
				p.warn(p.i, "~ is passed to the program as written: run: is not run through a shell, which would put your home folder there; write the path out")
			}
			p.begin()
			p.cur.WriteByte(c)
			p.i++
		}
	}
	if !p.failed {
		p.endWord()
	}
	return p
}

// operators are the characters that make a shell's operators.
const operators = "|&;<>()"

// inShell is how a command that needs a shell is written.
const inShell = "run: [sh, -c, '...']"

func (p *splitter) fail(at int, msg string) {
	p.issues = append(p.issues, commandIssue{at: at, msg: msg})
	p.failed = true
}

func (p *splitter) warn(at int, msg string) {
	p.issues = append(p.issues, commandIssue{at: at, msg: msg, warn: true})
}

// begin is called before a word's first character: one that starts a
// second command is refused.
func (p *splitter) begin() {
	if p.inWord {
		return
	}
	if p.ended {
		p.fail(p.i, "a second command: a shell ends a command at a line break, and run: runs one command; "+
			`end the line before with \ to continue the command, write run: > (folded) or a list, or run the lines in a shell (`+inShell+")")
	}
	p.inWord, p.start = true, p.i
	if len(p.words) == 0 {
		p.first = p.i
	}
}

func (p *splitter) endWord() {
	if !p.inWord {
		return
	}
	raw := p.s[p.start:p.i]
	if len(p.words) == 0 && text.IsAssignment(raw) {
		name, _, _ := strings.Cut(raw, "=")
		p.fail(p.start, fmt.Sprintf("%s=... before the command: a shell would set %s for the command, and run: is not run through one; "+
			"give it in env: (env: {%s: ...}), or quote the word if it is the command's name", name, name, name))
		return
	}
	p.words = append(p.words, p.cur.String())
	p.cur.Reset()
	p.inWord = false
}

func (p *splitter) backslash() {
	if p.i+1 == len(p.s) {
		p.fail(p.i, `a backslash at the end escapes nothing; remove it`)
		return
	}
	switch next := p.s[p.i+1]; {
	case next == '\n': // a continued line
	case !p.inWord && (next == ' ' || next == '\t'):
		p.fail(p.i, `a backslash before a blank starts a word with a blank: in a plain or folded (>) YAML string, a line ended with \ reads so, `+
			`since YAML joins the lines with a space; remove the backslash there, or write run: | to keep the lines (to start a word with a blank, quote it)`)
		return
	default:
		p.begin()
		p.cur.WriteByte(next)
	}
	p.i += 2
}

func (p *splitter) singleQuoted() {
	end := strings.IndexByte(p.s[p.i+1:], '\'')
	if end < 0 {
		p.fail(p.i, "unterminated ' quote: it opens here and nothing closes it")
		return
	}
	p.begin()
	p.cur.WriteString(p.s[p.i+1 : p.i+1+end])
	p.i += end + 2
}

func (p *splitter) doubleQuoted() {
	open := p.i
	p.begin()
	p.i++
	for !p.failed {
		if p.i >= len(p.s) {
			p.fail(open, `unterminated " quote: it opens here and nothing closes it`)
			return
		}
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return
		case c == '\\' && p.i+1 < len(p.s) && strings.IndexByte("$`\"\\\n", p.s[p.i+1]) >= 0:
			if p.s[p.i+1] != '\n' {
				p.cur.WriteByte(p.s[p.i+1])
			}
			p.i += 2
		case c == '$':
			p.dollar(true)
		case c == '`':
			p.fail(p.i, "`...` is command substitution, which needs a shell ("+inShell+" runs one)")
		default:
			p.cur.WriteByte(c)
			p.i++
		}
	}
}

// dollar reads a $ and what a shell would expand after it.
func (p *splitter) dollar(quoted bool) {
	at, next := p.i, byte(0)
	if p.i+1 < len(p.s) {
		next = p.s[p.i+1]
	}
	// A shell drops a backslash and a line end before it reads what
	// follows a $ (POSIX's line continuation): "$\<newline>0" is $0 there.
	after := p.i + 1
	for after+1 < len(p.s) && p.s[after] == '\\' && p.s[after+1] == '\n' {
		after += 2
	}
	if after > p.i+1 && after < len(p.s) && startsExpansion(p.s[after], quoted) {
		p.fail(at, `a $ whose line goes on after a backslash (\ and a line end) starts an expansion on the next line in a shell; write the $ and what follows it on one line, or the dollar sign as '$'`)
		return
	}
	switch {
	case next == '(':
		p.fail(at, "$(...) is command substitution (and $((...)) arithmetic), which needs a shell ("+inShell+" runs one)")
	case next == '{':
		end := strings.IndexByte(p.s[at:], '}')
		if end < 0 {
			p.fail(at, "unterminated ${: nothing closes it with }")
			return
		}
		p.keep(p.s[at : at+end+1])
	case isNameStart(next):
		end := at + 2
		for end < len(p.s) && (isNameStart(p.s[end]) || isDigit(p.s[end])) {
			end++
		}
		p.keep(p.s[at:end])
	case isDigit(next) || next != 0 && strings.IndexByte("@*#?$!-", next) >= 0: // $1, $?: special parameters
		p.keep(p.s[at : at+2])
	case !quoted && (next == '\'' || next == '"'):
		p.fail(at, `$'...' and $"..." are quotes some shells have and others do not; write '...' or "..." (and a dollar sign as '$')`)
	default: // a $ that starts nothing is itself, in a shell too
		p.begin()
		p.cur.WriteByte('$')
		p.i++
	}
}

// keep passes a parameter expansion on as written, with a warning.
func (p *splitter) keep(expansion string) {
	p.warn(p.i, fmt.Sprintf("%s is passed to the program as written: run: is split as a shell would split it, but not run through one; "+
		"give the program its values in env: and read them there, or run the line in a shell (%s)", expansion, inShell))
	p.begin()
	p.cur.WriteString(expansion)
	p.i += len(expansion)
}

func (p *splitter) operator() {
	end := p.i
	for end < len(p.s) && strings.IndexByte(operators, p.s[end]) >= 0 {
		end++
	}
	op := p.s[p.i:end]
	p.fail(p.i, fmt.Sprintf("%s is a shell operator, and run: is not run through a shell; quote it to pass it to the program ('%s'), or run the line in a shell (%s)", op, op, inShell))
}

// startsExpansion reports whether c, right after a $, makes it more than
// a dollar sign: an expansion, or (unquoted) a $'...' or $"..." quote.
func startsExpansion(c byte, quoted bool) bool {
	return c == '(' || c == '{' || isNameStart(c) || isDigit(c) || strings.IndexByte("@*#?$!-", c) >= 0 ||
		!quoted && (c == '\'' || c == '"')
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
