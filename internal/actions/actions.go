package actions

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// Config injects the process environment so tests never touch the real one.
// Nil fields take the real thing.
type Config struct {
	Getenv func(string) string
	// Open opens a file as os.OpenFile would.
	Open func(name string, flag int, perm os.FileMode) (io.WriteCloser, error)
	// Rand is the source of delimiters (crypto/rand.Reader by default).
	Rand io.Reader
}

// Actions reads inputs and writes outputs and the step summary. Unlike
// go-githubactions it never panics or exits, and its output delimiters are
// random.
type Actions struct {
	getenv func(string) string
	open   func(string, int, os.FileMode) (io.WriteCloser, error)
	rand   io.Reader
	gha    *githubactions.Action
}

// New returns Actions driven by cfg.
func New(cfg Config) *Actions {
	a := &Actions{getenv: cfg.Getenv, open: cfg.Open, rand: cfg.Rand}
	if a.getenv == nil {
		a.getenv = os.Getenv
	}
	if a.open == nil {
		a.open = func(name string, flag int, perm os.FileMode) (io.WriteCloser, error) {
			return os.OpenFile(name, flag, perm)
		}
	}
	if a.rand == nil {
		a.rand = rand.Reader
	}
	a.gha = githubactions.New(githubactions.WithGetenv(a.getenv), githubactions.WithWriter(io.Discard))
	return a
}

// InActions reports whether the process runs as a GitHub Actions step.
func (a *Actions) InActions() bool { return a.getenv("GITHUB_ACTIONS") == "true" }

// Input returns the action input name, trimmed, or "". The variable is
// INPUT_ + name upper-cased with spaces as underscores; hyphens stay, as the
// runner keeps them ("fail-on" is INPUT_FAIL-ON).
func (a *Actions) Input(name string) string {
	return a.gha.GetInput(name)
}

// StepSummaryPath is the job summary file of this step, or "".
func (a *Actions) StepSummaryPath() string { return a.getenv("GITHUB_STEP_SUMMARY") }

// OutputPath is the file step outputs are appended to ($GITHUB_OUTPUT).
func (a *Actions) OutputPath() string { return a.getenv("GITHUB_OUTPUT") }

// Errors returned by the writers.
var (
	errNoFile      = errors.New("not set by the runner")
	errBadName     = errors.New("invalid output name")
	errValueUnsafe = errors.New("output value contains the heredoc delimiter")
)

// SetOutput appends name=value to $GITHUB_OUTPUT in heredoc form with a
// fresh random delimiter. It refuses, writing nothing, a name outside
// [A-Za-z0-9_-] and a value that contains the delimiter.
func (a *Actions) SetOutput(name, value string) error {
	if !validName(name) {
		return fmt.Errorf("%w %q: only A-Z, a-z, 0-9, '_' and '-' are allowed", errBadName, name)
	}
	path := a.getenv("GITHUB_OUTPUT")
	if path == "" {
		return fmt.Errorf("set output %s: GITHUB_OUTPUT %w", name, errNoFile)
	}
	token, err := randomHex(a.rand)
	if err != nil {
		return fmt.Errorf("set output %s: delimiter: %w", name, err)
	}
	record, err := outputRecord(name, value, "ghadelimiter_"+token)
	if err != nil {
		return err
	}
	return a.appendRecord(path, record)
}

// outputFlags open $GITHUB_OUTPUT for appending; the runner creates it,
// and creating it when missing changes nothing it reads.
const outputFlags = os.O_WRONLY | os.O_CREATE | os.O_APPEND

// CheckOutputFile tells, before a run spends any time, whether step
// outputs can be written: GITHUB_OUTPUT is set and opens for appending.
// It writes nothing.
func (a *Actions) CheckOutputFile() error {
	path := a.getenv("GITHUB_OUTPUT")
	if path == "" {
		return fmt.Errorf("GITHUB_OUTPUT %w", errNoFile)
	}
	f, err := a.open(path, outputFlags, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// outputRecord is one heredoc entry: name<<D, value, D.
func outputRecord(name, value, delim string) (string, error) {
	if strings.Contains(value, delim) {
		return "", fmt.Errorf("set output %s: %w", name, errValueUnsafe)
	}
	return name + "<<" + delim + "\n" + value + "\n" + delim + "\n", nil
}

// truncater is the part of *os.File that takes back a short write.
type truncater interface {
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
}

// appendRecord appends a record to path whole or not at all: with one
// Write call, so a concurrent reader never sees half of it, and, when that
// write fails part-way (a full disk), by cutting the file back to its old
// size, since the runner would read a record without its closing
// delimiter as swallowing everything after it.
func (a *Actions) appendRecord(path, record string) (err error) {
	f, err := a.open(path, outputFlags, 0o644)
	if err != nil {
		return err // an *fs.PathError: it names the operation and path
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	size := int64(-1)
	t, canUndo := f.(truncater)
	if canUndo {
		if info, err := t.Stat(); err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
	}
	n, err := io.WriteString(f, record)
	if err == nil && n < len(record) {
		err = &fs.PathError{Op: "write", Path: path, Err: io.ErrShortWrite}
	}
	if err == nil || n == 0 {
		return err
	}
	if size < 0 {
		return fmt.Errorf("%w (%d bytes of a %d-byte record were written and cannot be taken back)", err, n, len(record))
	}
	if terr := t.Truncate(size); terr != nil {
		return fmt.Errorf("%w; taking back the partial record: %v", err, terr)
	}
	return err
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}
