package matrix

import (
	"path/filepath"
	"slices"
	"strings"
)

// A Python command line, read as Python reads it
// (https://docs.python.org/3/using/cmdline.html): what run's default
// name and the words on a command no build was seen in look for.

// IsPython reports whether a command's word names a Python interpreter
// (python, python3, /venv/bin/python3.11).
func IsPython(word string) bool {
	return strings.HasPrefix(filepath.Base(word), "python")
}

// PythonLine is what the words after a Python interpreter say.
type PythonLine struct {
	Flags  string // the one-letter options that take no argument, in order: "uI" for -u -I or -uI
	Script string // the script it runs; "-" for standard input; "" for -c, -m or none
	Module string // what -m runs
	Code   bool   // it runs -c's code
}

// pythonArgOptions are Python's one-letter options that take an
// argument, the rest of their word or the next word: -c and -m end the
// options (what follows is the program's), -W and -X do not.
const pythonArgOptions = "cmWX"

// pythonLongArgOptions are its long options that take the next word as
// their argument (Python takes no --option=value).
var pythonLongArgOptions = []string{"--check-hash-based-pycs"}

// ParsePython reads args, the words after a Python interpreter.
func ParsePython(args []string) (line PythonLine) {
	var flags strings.Builder
	defer func() { line.Flags = flags.String() }()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--": // the options end; the next word is the script
			if i+1 < len(args) {
				line.Script = args[i+1]
			}
			return line
		case strings.HasPrefix(a, "--"):
			if slices.Contains(pythonLongArgOptions, a) {
				i++ // its argument
			}
			continue
		case a == "-" || len(a) < 2 || a[0] != '-':
			line.Script = a
			return line
		}
		for k := 1; k < len(a); k++ {
			opt := a[k]
			if !strings.ContainsRune(pythonArgOptions, rune(opt)) {
				flags.WriteByte(opt)
				continue
			}
			arg := a[k+1:]
			if arg == "" && i+1 < len(args) {
				i++
				arg = args[i]
			}
			switch opt {
			case 'c':
				line.Code = true
				return line
			case 'm':
				line.Module = arg
				return line
			}
			break // -W or -X: the rest of the word, or the next, was its argument
		}
	}
	return line
}
