package actions

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fakeFS records what Actions writes, per path.
type fakeFS struct {
	files map[string]*bytes.Buffer
	flags map[string]int
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func (fs *fakeFS) open(name string, flag int, _ os.FileMode) (io.WriteCloser, error) {
	if fs.files == nil {
		fs.files, fs.flags = map[string]*bytes.Buffer{}, map[string]int{}
	}
	b := fs.files[name]
	if b == nil || flag&os.O_TRUNC != 0 {
		b = &bytes.Buffer{}
		fs.files[name] = b
	}
	fs.flags[name] = flag
	return nopCloser{b}, nil
}

func newTestActions(env map[string]string, fs *fakeFS, rand io.Reader) *Actions {
	return New(Config{
		Getenv: func(k string) string { return env[k] },
		Open:   fs.open,
		Rand:   rand,
	})
}

func TestInput(t *testing.T) {
	a := newTestActions(map[string]string{
		"INPUT_FAIL-ON":     "  budget  ",
		"INPUT_MATRIX_FILE": "m.yaml",
		"INPUT_JOBS":        "2",
	}, &fakeFS{}, nil)
	for name, want := range map[string]string{"fail-on": "budget", "matrix file": "m.yaml", "jobs": "2", "absent": ""} {
		if got := a.Input(name); got != want {
			t.Errorf("Input(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestEnvironmentQueries(t *testing.T) {
	a := newTestActions(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": "/s"}, &fakeFS{}, nil)
	if !a.InActions() || a.StepSummaryPath() != "/s" {
		t.Errorf("InActions() = %v, StepSummaryPath() = %q", a.InActions(), a.StepSummaryPath())
	}
	if newTestActions(map[string]string{"GITHUB_ACTIONS": "1"}, &fakeFS{}, nil).InActions() {
		t.Error(`GITHUB_ACTIONS="1" counted as Actions; the runner sets "true"`)
	}
}

func TestSetOutputWritesRandomHeredoc(t *testing.T) {
	fs := &fakeFS{}
	a := newTestActions(map[string]string{"GITHUB_OUTPUT": "/out"}, fs, bytes.NewReader(seq(32)))
	if err := a.SetOutput("engine-path", "a\nb"); err != nil {
		t.Fatal(err)
	}
	if err := a.SetOutput("ok_count", "3"); err != nil {
		t.Fatal(err)
	}
	want := "engine-path<<ghadelimiter_000102030405060708090a0b0c0d0e0f\na\nb\nghadelimiter_000102030405060708090a0b0c0d0e0f\n" +
		"ok_count<<ghadelimiter_101112131415161718191a1b1c1d1e1f\n3\nghadelimiter_101112131415161718191a1b1c1d1e1f\n"
	if got := fs.files["/out"].String(); got != want {
		t.Errorf("GITHUB_OUTPUT =\n%s\nwant\n%s", got, want)
	}
	if fs.flags["/out"]&os.O_APPEND == 0 {
		t.Error("GITHUB_OUTPUT not opened for appending")
	}
}

func TestSetOutputRefusesUnsafeInput(t *testing.T) {
	fs := &fakeFS{}
	// The same 16 random bytes twice, so the second call's delimiter is known.
	rand := bytes.NewReader(append(seq(16), seq(16)...))
	a := newTestActions(map[string]string{"GITHUB_OUTPUT": "/out"}, fs, rand)
	for _, name := range []string{"", "a b", "a\nb", "x<<EOF", "a=b", "é"} {
		if err := a.SetOutput(name, "v"); !errors.Is(err, errBadName) {
			t.Errorf("SetOutput(%q) = %v, want errBadName", name, err)
		}
	}
	_ = a.SetOutput("first", "v") // uses the first 16 bytes
	before := fs.files["/out"].String()
	evil := "x\nghadelimiter_000102030405060708090a0b0c0d0e0f\ninjected<<Z\nowned\nZ"
	if err := a.SetOutput("second", evil); !errors.Is(err, errValueUnsafe) {
		t.Fatalf("SetOutput with the delimiter in the value = %v, want errValueUnsafe", err)
	}
	if got := fs.files["/out"].String(); got != before {
		t.Errorf("a refused value was written:\n%s", strings.TrimPrefix(got, before))
	}
}

func TestSetOutputWithoutRunnerFile(t *testing.T) {
	a := newTestActions(nil, &fakeFS{}, nil)
	if err := a.SetOutput("a", "b"); !errors.Is(err, errNoFile) {
		t.Errorf("SetOutput without GITHUB_OUTPUT = %v, want errNoFile", err)
	}
}

// fullDisk is a GITHUB_OUTPUT on a disk that fills up part-way through a
// write, as a real full disk does.
type fullDisk struct{ *os.File }

func (f fullDisk) Write(p []byte) (int, error) {
	n, _ := f.File.Write(p[:len(p)/2])
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

func (f fullDisk) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// Issue 13 item 16: a full disk left "report<<ghadelimiter_…" without its
// end, which makes the runner read every later record as part of it.
func TestSetOutputTakesBackARecordCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "github_output")
	const before = "earlier<<EOF\nvalue\nEOF\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	a := New(Config{
		Getenv: func(k string) string { return map[string]string{"GITHUB_OUTPUT": path}[k] },
		Open: func(name string, flag int, perm os.FileMode) (io.WriteCloser, error) {
			f, err := os.OpenFile(name, flag, perm)
			if err != nil {
				return nil, err
			}
			return fullDisk{f}, nil
		},
	})
	err := a.SetOutput("report", strings.Repeat("x", 4096))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("SetOutput on a full disk = %v, want ENOSPC", err)
	}
	if got, _ := os.ReadFile(path); string(got) != before {
		t.Errorf("GITHUB_OUTPUT after a failed write:\n%q\nwant it as it was:\n%q", got, before)
	}
	if strings.Count(err.Error(), path) != 1 {
		t.Errorf("error %q: want the path named once", err)
	}
}

func TestCheckOutputFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "out")
	a := New(Config{Getenv: func(k string) string { return map[string]string{"GITHUB_OUTPUT": ok}[k] }})
	if err := a.CheckOutputFile(); err != nil {
		t.Errorf("CheckOutputFile = %v", err)
	}
	if data, err := os.ReadFile(ok); err != nil || len(data) != 0 {
		t.Errorf("CheckOutputFile wrote %q (%v)", data, err)
	}
	a = New(Config{Getenv: func(k string) string { return map[string]string{"GITHUB_OUTPUT": dir}[k] }})
	if err := a.CheckOutputFile(); err == nil {
		t.Error("CheckOutputFile of a folder succeeded")
	}
	if err := New(Config{Getenv: func(string) string { return "" }}).CheckOutputFile(); !errors.Is(err, errNoFile) {
		t.Errorf("CheckOutputFile without GITHUB_OUTPUT = %v, want errNoFile", err)
	}
}

// seq is 00 01 02 …: randomness that makes fences reproducible.
func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}
