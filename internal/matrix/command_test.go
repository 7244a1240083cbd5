package matrix

import (
	"bytes"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/text"
)

// splitCase is a run: string and what splitting it gives: its words, or
// the issue (at its offset, a part of its message) that ends it or warns.
type splitCase struct {
	in    string
	words []string
	at    int    // the issue's offset; -1 for none
	issue string // a part of its message
	warn  bool
}

var splitCases = []splitCase{
	{in: `python build.py --out 'a b.engine'`, words: []string{"python", "build.py", "--out", "a b.engine"}, at: -1},
	{in: `a\ b "c d" 'e f'`, words: []string{"a b", "c d", "e f"}, at: -1},
	{in: `"a\"b\\c\$d\e\` + "`" + `f"`, words: []string{`a"b\c$d\e` + "`f"}, at: -1},
	{in: `a'b'"c"d`, words: []string{"abcd"}, at: -1},
	{in: `'' "" x`, words: []string{"", "", "x"}, at: -1},
	{in: "a \\\n  b", words: []string{"a", "b"}, at: -1},
	{in: "a\\\nb \"c\\\nd\"", words: []string{"ab", "cd"}, at: -1},
	// A line continuation right after a $: a shell reads what follows it.
	{in: "a $\\\n0", at: 2, issue: "whose line goes on after a backslash"},
	{in: "a \"$\\\nHOME\"", at: 3, issue: "whose line goes on after a backslash"},
	{in: "a $\\\n x", words: []string{"a", "$", "x"}, at: -1},
	{in: "'multi\nline' x", words: []string{"multi\nline", "x"}, at: -1},
	{in: `python x.py # a comment`, words: []string{"python", "x.py"}, at: -1},
	{in: `a#b '#'c`, words: []string{"a#b", "#c"}, at: -1},
	{in: "\n  # first\n\tpython x.py\n# last\n\n", words: []string{"python", "x.py"}, at: -1},
	{in: `a * ?.onnx [ab] b~ '~' "$" $ a$`, words: []string{"a", "*", "?.onnx", "[ab]", "b~", "~", "$", "$", "a$"}, at: -1},
	{in: `python A=1 x=~`, words: []string{"python", "A=1", "x=~"}, at: -1},
	{in: `'A=1' python`, words: []string{"A=1", "python"}, at: -1},
	{in: `é "ü" 'ß'`, words: []string{"é", "ü", "ß"}, at: -1},
	{in: "", at: -1},
	{in: "   # only a comment\n", at: -1},

	{in: "a\nb", at: 2, issue: "a second command"},
	{in: "a # c\n b", at: 7, issue: "a second command"},
	{in: `a | b`, at: 2, issue: "| is a shell operator"},
	{in: `a 2>&1`, at: 3, issue: ">& is a shell operator"},
	{in: `a && b`, at: 2, issue: "&& is a shell operator"},
	{in: `a; b`, at: 1, issue: "; is a shell operator"},
	{in: `(a)`, at: 0, issue: "( is a shell operator"},
	{in: `a $(b)`, at: 2, issue: "$(...) is command substitution"},
	{in: "a `b`", at: 2, issue: "`...` is command substitution"},
	{in: `a "x$(b)"`, at: 4, issue: "$(...) is command substitution"},
	{in: "a \"x`b`\"", at: 4, issue: "`...` is command substitution"},
	{in: `A=1 python x.py`, at: 0, issue: "A=... before the command: a shell would set A"},
	{in: `a 'b`, at: 2, issue: "unterminated ' quote"},
	{in: `a "b\"`, at: 2, issue: `unterminated " quote`},
	{in: `a \`, at: 2, issue: "a backslash at the end"},
	{in: `python x.py \ --fp16`, at: 12, issue: "a backslash before a blank"},
	{in: `a $'x'`, at: 2, issue: "$'...' and $\"...\" are quotes"},
	{in: `a $"x"`, at: 2, issue: "$'...' and $\"...\" are quotes"},
	{in: `a ${X`, at: 2, issue: "unterminated ${"},

	{in: `a $HOME/x`, words: []string{"a", "$HOME/x"}, at: 2, issue: "$HOME is passed to the program as written", warn: true},
	{in: `a "${X:-y z}"`, words: []string{"a", "${X:-y z}"}, at: 3, issue: "${X:-y z} is passed", warn: true},
	{in: `a x$1`, words: []string{"a", "x$1"}, at: 3, issue: "$1 is passed", warn: true},
	{in: `a "$?"`, words: []string{"a", "$?"}, at: 3, issue: "$? is passed", warn: true},
	{in: `a ~/x`, words: []string{"a", "~/x"}, at: 2, issue: "~ is passed to the program as written", warn: true},
}

// TestSplitCommand: each string splits into the words a POSIX shell
// would make of it, or stops at the first thing only a shell could do,
// at its offset; what a shell would expand is kept, with a warning.
func TestSplitCommand(t *testing.T) {
	for _, c := range splitCases {
		words, issues := splitCommand(c.in)
		if c.at < 0 {
			if len(issues) > 0 || !reflect.DeepEqual(words, c.words) {
				t.Errorf("%q: words %q, issues %+v; want %q", c.in, words, issues, c.words)
			}
			continue
		}
		if len(issues) != 1 || issues[0].at != c.at || !strings.Contains(issues[0].msg, c.issue) || issues[0].warn != c.warn {
			t.Errorf("%q: issues %+v; want one at %d saying %q (warning: %v)", c.in, issues, c.at, c.issue, c.warn)
			continue
		}
		if c.warn && !reflect.DeepEqual(words, c.words) {
			t.Errorf("%q: words %q, want %q", c.in, words, c.words)
		}
	}
}

// FuzzSplitCommand checks the splitter three ways: any string splits
// without a panic, its issues inside it and an error only last; the
// words of any string that splits cleanly are what /bin/sh makes of it
// (with globbing off: run: never globs); and any list of words, quoted
// by text.ShellLine, splits back into itself.
func FuzzSplitCommand(f *testing.F) {
	for _, c := range splitCases {
		f.Add(c.in)
	}
	f.Add("python\x00build.py\x00--out\x00a b\x00it's\x00$HOME\x00~\x00#x\x00A=1")
	f.Fuzz(func(t *testing.T, s string) {
		p := split(s)
		for i, is := range p.issues {
			if is.at < 0 || is.at > len(s) || !is.warn && i != len(p.issues)-1 {
				t.Fatalf("%q: issue %d of %+v out of place", s, i, p.issues)
			}
		}
		if len(p.issues) == 0 && len(p.words) > 0 && !strings.ContainsRune(s, 0) {
			if got := wordsOfSh(t, s[p.first:]); !reflect.DeepEqual(got, p.words) {
				t.Fatalf("%q splits into %q; sh makes %q of it", s, p.words, got)
			}
		}
		words := strings.Split(s, "\x00")
		line := text.ShellLine(words)
		back, issues := splitCommand(line)
		if len(issues) > 0 || !reflect.DeepEqual(back, words) {
			t.Fatalf("%q, quoted as %s, splits back into %q (%+v)", words, line, back, issues)
		}
	})
}

// wordsOfSh is the words sh makes of s, put after a command that prints
// each of them. s splits cleanly from its first word on: it holds no
// operator, expansion or second command, so sh runs nothing but printf.
func wordsOfSh(t *testing.T, s string) []string {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", `set -f; printf '%s\000' `+s).Output()
	if err != nil {
		t.Fatalf("sh with %q: %v", s, err)
	}
	words := strings.Split(string(bytes.TrimSuffix(out, []byte{0})), "\x00")
	return words
}
