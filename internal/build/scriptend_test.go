package build

import (
	"strings"
	"testing"
)

func TestPythonFlagsWhy(t *testing.T) {
	pip := "unless trt-action is installed with pip in that Python's environment"
	cases := []struct {
		argv []string
		want []string // in the text, all of them
		not  []string // not in the text
	}{
		{[]string{"python", "-I", "build.py"}, []string{"python runs with -I,", pip}, nil},
		{[]string{"/venv/bin/python3", "-E", "build.py"}, []string{"python3 runs with -E,", pip}, nil},
		{[]string{"python3", "-uI", "-m", "polygraphy"}, []string{"runs with -I,"}, nil},
		// -S keeps out both ways in: no word of pip helping.
		{[]string{"python", "-S", "build.py"}, []string{"python runs with -S", "neither through PYTHONPATH nor through the .pth file"}, []string{pip}},
		{[]string{"python", "-IS", "build.py"}, []string{"runs with -S"}, []string{pip}},
		{[]string{"python", "-I", "-S", "build.py"}, []string{"runs with -S"}, nil},
		// A long option's argument is not the script.
		{[]string{"python", "--check-hash-based-pycs", "never", "-I", "build.py"}, []string{"runs with -I,"}, nil},
		// The arguments of -W and -X are not flags, nor what follows -c.
		{[]string{"python", "-Wignore::ImportWarning", "build.py"}, []string{"it enters through PYTHONPATH"}, []string{"runs with"}},
		{[]string{"python", "-W", "ignore::ImportWarning", "-X", "Sdev", "build.py"}, []string{"it enters through PYTHONPATH"}, []string{"runs with"}},
		{[]string{"python", "-c", "-I"}, []string{"it enters through PYTHONPATH"}, []string{"runs with"}},
		{[]string{"python", "build.py", "-I"}, []string{"it enters through PYTHONPATH"}, []string{"runs with"}},
		{[]string{"trtexec", "-I"}, []string{"it enters through PYTHONPATH", "the .pth file of trt-action installed with pip"}, []string{"runs with"}},
	}
	for _, c := range cases {
		got := pythonFlagsWhy(c.argv)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: %q lacks %q", c.argv, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%q: %q says %q", c.argv, got, n)
			}
		}
	}
}
