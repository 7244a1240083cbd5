package matrix

import (
	"strings"
	"testing"
)

func TestACommandIsNamedByWhatItRuns(t *testing.T) {
	for _, c := range []struct {
		want string
		argv []string
	}{
		{"yolo", []string{"/usr/bin/yolo", "export", "model=yolo11n.pt"}},
		{"export.py", []string{"python3", "-u", "tools/export.py", "--fp16"}},
		{"build.py", []string{"/venv/bin/python3.11", "-X", "dev", "-W", "ignore", "build.py"}},
		{"polygraphy", []string{"python", "-m", "polygraphy", "convert"}},
		{"trtllm_x", []string{"python", "-mtrtllm_x"}},
		{"python", []string{"python", "-c", "import tensorrt"}},
		{"python3", []string{"python3"}},
		{"trtexec", []string{"trtexec", "--onnx=m.onnx"}},
		// Options whose argument is the next word: the argument is not the script.
		{"mlp.py", []string{"python", "--check-hash-based-pycs", "never", "mlp.py"}},
		{"mlp.py", []string{"python", "-uW", "ignore", "-Xdev", "mlp.py"}},
		{"after.py", []string{"python", "-W", "-m", "after.py"}}, // -W's argument, not -m
		{"tool", []string{"python", "-um", "tool"}},
		{"mod", []string{"python", "-I", "-m", "mod"}},
		{"python", []string{"python", "-uc", "print(1)"}},
		{"python", []string{"python", "-", "from-stdin"}},
		// Names a build name cannot hold are made safe.
		{"my_build_.py", []string{"python", "my build ü.py"}},
		{"dash.py", []string{"python", "-u", "--", "-dash.py"}},
		{"my_tool", []string{"./my tool"}},
		{"x.py-_-with_sign", []string{"python", "x.py-$-with$sign"}},
		{"command", []string{"python", "ü"}},
	} {
		if got := commandName(c.argv); got != c.want {
			t.Errorf("%q is named %q, want %q", c.argv, got, c.want)
		}
	}
}

// Whatever a command's name, the name made of it is a build name.
func TestSafeNamesAreBuildNames(t *testing.T) {
	var every strings.Builder
	for r := rune(0); r < 0x250; r++ {
		every.WriteRune(r)
	}
	for _, name := range []string{every.String(), strings.Repeat("ab", 200), "ü", "-", "..a", "a b", "\x00", ""} {
		if got := safeName(name); nameProblem(got) != "" {
			t.Errorf("safeName(%q) = %q: %s", name, got, nameProblem(got))
		}
	}
	if got := safeName(strings.Repeat("a", 200)); len(got) != 128 {
		t.Errorf("a long name is cut to %d characters, want 128 (the most a build name may have)", len(got))
	}
	// Every character a build name may hold is kept.
	if got := safeName("a0._+=@,-Z"); got != "a0._+=@,-Z" {
		t.Errorf("safeName kept %q of a0._+=@,-Z", got)
	}
}

// Python's command line, read as Python reads it.
func TestParsePython(t *testing.T) {
	for _, c := range []struct {
		args []string
		want PythonLine
	}{
		{[]string{"-u", "-I", "b.py", "-S"}, PythonLine{Flags: "uI", Script: "b.py"}},
		{[]string{"-uIS", "b.py"}, PythonLine{Flags: "uIS", Script: "b.py"}},
		{[]string{"-uWignore", "-I", "b.py"}, PythonLine{Flags: "uI", Script: "b.py"}},
		{[]string{"-W", "ignore", "-X", "Sdev", "b.py"}, PythonLine{Script: "b.py"}},
		{[]string{"--check-hash-based-pycs", "never", "-E", "b.py"}, PythonLine{Flags: "E", Script: "b.py"}},
		{[]string{"--version"}, PythonLine{}},
		{[]string{"-Ic", "-S"}, PythonLine{Flags: "I", Code: true}},
		{[]string{"-m", "polygraphy", "-I"}, PythonLine{Module: "polygraphy"}},
		{[]string{"-B", "-", "x"}, PythonLine{Flags: "B", Script: "-"}},
		{[]string{"--", "-I"}, PythonLine{Script: "-I"}},
		{nil, PythonLine{}},
	} {
		if got := ParsePython(c.args); got != c.want {
			t.Errorf("ParsePython(%q) = %+v, want %+v", c.args, got, c.want)
		}
	}
}
