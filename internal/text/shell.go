package text

import (
	"slices"
	"strings"
)

// ShellQuote is w as one word a POSIX shell reads back as w: as it is when
// it holds only characters no shell treats specially, else in single
// quotes (a single quote inside closes them, is escaped with a backslash
// and opens them again). For commands trt-action prints to be pasted into
// a shell: plan --trtexec's lines, a build's run: command.
func ShellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=+/.,:@%", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// ShellLine is argv as a command line a POSIX shell runs as argv: each
// word ShellQuote'd, and a first word a shell would read as something
// else than the command's name (a reserved word such as if, or NAME=value,
// which sets a variable) quoted too.
func ShellLine(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		words[i] = ShellQuote(w)
		if i == 0 && words[i] == w && (slices.Contains(reservedWords, w) || IsAssignment(w)) {
			words[i] = "'" + w + "'"
		}
	}
	return strings.Join(words, " ")
}

// reservedWords are the POSIX shell's reserved words (POSIX.1-2024, Shell
// Command Language, 2.4) that ShellQuote leaves bare: a shell reads them
// as reserved only unquoted and in a command's first word.
var reservedWords = []string{"case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in", "then", "until", "while"}

// IsAssignment reports whether a shell reads word w, before a command's
// name, as setting a variable for the command: NAME=value (2.9.1).
func IsAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && IsEnvName(name)
}

// IsEnvName reports whether name is a name a shell's variables may have
// (POSIX.1-2024, Base Definitions, 3.216: letters, digits and
// underscores, not starting with a digit), so one an environment variable
// set through a shell, or read by one, can have.
func IsEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	return strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	}) < 0
}
