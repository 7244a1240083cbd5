package wheel

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// need skips the test when a tool it needs is missing, except under CI,
// where every test must run (CI installs the tools: .ci/run, scripts/test).
func need(t *testing.T, what, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing (%s); under CI this test must run", what, why)
	}
	t.Skipf("%s is missing (%s)", what, why)
}

// distPython is the Python of scripts/setup-dist-tools, or the test is
// skipped (failed under CI).
func distPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("TRT_ACTION_DIST_PYTHON")
	if py == "" {
		need(t, "TRT_ACTION_DIST_PYTHON", `eval "$(scripts/setup-dist-tools)" sets it`)
	}
	return py
}

// compiled keeps what compile made, by its command, so tests that stage
// the same programs compile them once.
var compiled sync.Map

// compile builds src (C or C++, by lang) with compiler into a file in a
// temporary folder and returns its path.
func compile(t *testing.T, compiler, lang, src string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(compiler); err != nil {
		need(t, compiler, "the C and C++ compilers make dist uses")
	}
	out := filepath.Join(t.TempDir(), "out")
	key := strings.Join(append([]string{compiler, lang, src}, args...), "\x00")
	if b, ok := compiled.Load(key); ok {
		if err := os.WriteFile(out, b.([]byte), 0o755); err != nil {
			t.Fatal(err)
		}
		return out
	}
	cmd := exec.Command(compiler, append([]string{"-x", lang, "-o", out, "-"}, args...)...)
	cmd.Stdin = strings.NewReader(src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", compiler, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	compiled.Store(key, b)
	return out
}
