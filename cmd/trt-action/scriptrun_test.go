package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// trt-action run as a user runs it, with commands that need no TensorRT:
// the build is named safely after a script whose name is no build name,
// its engines are named as the user named them (relative to the working
// folder, as a matrix build's are), a Python whose builds ran in a child
// the hook could not enter (python -I) gets the reason no TensorRT build
// was seen, and a command that could not start gets none about the hook.
func TestRunNamesThingsAsTheUserDid(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed (the hook's own tests need it too): %v", err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "my build ü.py"), `import os, subprocess, sys
os.makedirs("out", exist_ok=True)
with open(os.path.join("out", "e.engine"), "w") as f:
    f.write("engine")
subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
`)
	out, err := command(dir, nil, "run", "--report", "r.json", "--engine", "out/./e.engine", "--", python, "my build ü.py").CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	b := readReport(t, filepath.Join(dir, "r.json")).Builds[0]
	if b.Name != "my_build_.py" {
		t.Errorf("named %q, want my_build_.py", b.Name)
	}
	if len(b.Engines) != 1 || b.Engines[0].Path != "out/e.engine" {
		t.Errorf("engines %+v, want out/e.engine as given", b.Engines)
	}
	if len(b.Warnings) != 1 || !strings.HasPrefix(b.Warnings[0], "no TensorRT build was seen in the command: 1 process of the command loaded trt-action's hook") ||
		!strings.Contains(b.Warnings[0], "-I or -E") || b.Script.Unobserved != "" {
		t.Errorf("warnings %q, unobserved %q", b.Warnings, b.Script.Unobserved)
	}

	out, err = command(dir, nil, "run", "--report", "r2.json", "--", "./no-such-program").CombinedOutput()
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	b = readReport(t, filepath.Join(dir, "r2.json")).Builds[0]
	if !strings.Contains(b.Reason, "could not start") || b.Script.Unobserved != "" {
		t.Errorf("a command that could not start: %s (%s), unobserved %q", b.Status, b.Reason, b.Script.Unobserved)
	}
}
