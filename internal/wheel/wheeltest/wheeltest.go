// Package wheeltest has what the tests of internal/wheel and mkwheel share:
// compiling tiny programs, and the tools they need (skipped locally when
// missing, failed under CI). Only tests import it.
package wheeltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Need skips the test when a tool it needs is missing, except under CI,
// where every test must run (CI installs the tools: .ci/run, scripts/test).
func Need(t *testing.T, what, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing (%s); under CI this test must run", what, why)
	}
	t.Skipf("%s is missing (%s)", what, why)
}

// DistPython is the Python of scripts/setup-dist-tools, or the test is
// skipped (failed under CI).
func DistPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("TRT_ACTION_DIST_PYTHON")
	if py == "" {
		Need(t, "TRT_ACTION_DIST_PYTHON", `eval "$(scripts/setup-dist-tools)" sets it`)
	}
	return py
}

// compiled keeps what compile made, by its command, so tests that stage
// the same programs compile them once.
var compiled sync.Map

// Compile builds src (C or C++, by lang) with compiler into a file in a
// temporary folder and returns its path.
func Compile(t *testing.T, compiler, lang, src string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(compiler); err != nil {
		Need(t, compiler, "the system's C and C++ compilers, which make builds with")
	}
	return compile(t, exec.Command(compiler), lang, src, args...)
}

// ZigCompile builds src as Compile does, with the release build's compiler
// (scripts/zig-cc for C, zig-c++ for C++) for target: x86_64-linux-gnu.2.28
// or aarch64-linux-gnu.2.28.
func ZigCompile(t *testing.T, target, lang, src string, args ...string) string {
	t.Helper()
	if os.Getenv("TRT_ACTION_ZIG") == "" {
		Need(t, "TRT_ACTION_ZIG", `the release build's compiler: eval "$(scripts/setup-dist-tools)" sets it`)
	}
	wrapper := map[string]string{"c": "zig-cc", "c++": "zig-c++"}[lang]
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", wrapper))
	cmd.Env = append(os.Environ(), "TRT_ACTION_ZIG_TARGET="+target)
	return compile(t, cmd, lang, src, args...)
}

// repoRoot is the repository's root, three folders above this file.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("runtime.Caller: no file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// compile runs cmd (a compiler, its Env set) on src, with args after its
// own, into a file in a temporary folder and returns its path.
func compile(t *testing.T, cmd *exec.Cmd, lang, src string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	key := strings.Join(append(append([]string{cmd.Path, lang, src}, cmd.Env...), args...), "\x00")
	if b, ok := compiled.Load(key); ok {
		if err := os.WriteFile(out, b.([]byte), 0o755); err != nil {
			t.Fatal(err)
		}
		return out
	}
	cmd.Args = append(append(cmd.Args, "-x", lang, "-o", out, "-"), args...)
	cmd.Stdin = strings.NewReader(src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	compiled.Store(key, b)
	return out
}

// Programs whose needs differ: C needs glibc only, C++ libstdc++ as well
// (with g++; libc++ linked in with the release compiler). CXXWaits needs
// GLIBCXX_3.4.30 with GCC 12's libstdc++ (std::condition_variable::wait),
// as trt-action's own monitor did.
const (
	CProgram   = "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n"
	CXXProgram = "#include <iostream>\n#include <string>\n#include <thread>\n" +
		"int main(int argc, char **) { std::string s(argc, 'x'); std::thread th([&] { std::cout << s << std::endl; }); th.join(); return 0; }\n"
	CXXLibrary = "#include <string>\n#include <stdexcept>\n" +
		"extern \"C\" int f(int n) { if (n < 0) throw std::runtime_error(std::to_string(n)); return (int)std::string(n, 'y').size(); }\n"
	CXXWaits = "#include <condition_variable>\n#include <mutex>\n#include <thread>\n" +
		"int main() { std::mutex m; std::condition_variable cv; bool done = false;\n" +
		"  std::thread th([&] { std::lock_guard<std::mutex> l(m); done = true; cv.notify_one(); });\n" +
		"  { std::unique_lock<std::mutex> l(m); while (!done) cv.wait(l); } th.join(); return 0; }\n"
)
