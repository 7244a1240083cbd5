package cli

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// exitCodeTable is the one table of exit codes the documentation has: the
// first table under an "Exit codes" heading in README.md or docs/, by code
// ("130 / 143" is two), with its meaning.
func exitCodeTable(t *testing.T) map[int]string {
	t.Helper()
	docs, _ := filepath.Glob("../../docs/*.md")
	heading := regexp.MustCompile(`(?m)^#+ Exit codes\s*$`)
	rows := map[int]string{}
	var where []string
	for _, path := range append([]string{"../../README.md"}, docs...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		loc := heading.FindIndex(data)
		if loc == nil {
			continue
		}
		where = append(where, path)
		inTable := false
		for _, line := range strings.Split(string(data[loc[1]:]), "\n") {
			if !strings.HasPrefix(line, "|") {
				if inTable {
					break
				}
				continue
			}
			inTable = true
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for _, field := range strings.Split(cells[0], "/") {
				if code, err := strconv.Atoi(strings.TrimSpace(field)); err == nil {
					rows[code] = strings.TrimSpace(cells[len(cells)-1])
				}
			}
		}
	}
	if len(where) != 1 || len(rows) == 0 {
		t.Fatalf("want one exit-code table under an \"Exit codes\" heading; found headings in %q and %d codes", where, len(rows))
	}
	return rows
}

// Issue 18 point 2: one function maps errors to exit codes, and every
// row of the documented table is what some error maps to; a row without a
// case here, or a case the table lacks, fails.
func TestExitCodesAreTheDocumentedTable(t *testing.T) {
	c, _, _ := fanoutCommand(nil)
	folder := t.TempDir() // an output that is a folder cannot be written
	unwritable := outputs.New(c.actions(), outputs.Paths{Report: folder}).Check("no build was started")
	var oe outputs.Error
	if !errors.As(unwritable, &oe) {
		t.Fatalf("Check of a folder: %v, want an outputs.Error", unwritable)
	}
	sigint, sigterm := interrupted{report.SignalInterrupt}, interrupted{report.SignalTerminate}
	// What commands end with when a file the user named is there and
	// could not be read (a folder), or names nothing, or a step output
	// could not be written.
	dir := t.TempDir()
	mfile := filepath.Join(dir, "m.yml")
	if err := os.WriteFile(mfile, []byte("version: 1\nbuilds:\n  - {name: a, backend: sim}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shardReport := writeShard(t, dir, "shard.json", time.Now(), report.Build{Name: "a", Backend: "sim", Status: report.StatusOK})
	merged, missing, notDir := filepath.Join(dir, "merged.json"), filepath.Join(dir, "absent"), filepath.Join(mfile, "x")
	run := func(env map[string]string, args ...string) error {
		c, _, _ := fanoutCommand(env)
		c.Streams.In = strings.NewReader("")
		return c.run(args)
	}
	unreadable := []error{
		run(nil, "validate", folder), run(nil, "trace", "convert", folder), run(nil, "merge", "--report", merged, folder),
		run(nil, "merge", "--report", merged, "--baseline", folder, shardReport), run(nil, "plan", "--github-matrix", "--baseline", folder, mfile),
		run(nil, "cache", "ls", "-f", folder),
	}
	absent := []error{
		run(nil, "validate", missing), run(nil, "trace", "convert", missing), run(nil, "trace", "convert", notDir),
		run(nil, "merge", "--report", merged, missing), run(nil, "plan", "--github-matrix", "--baseline", missing, mfile),
		run(nil, "cache", "ls", "-f", missing), run(nil, "cache", "ls", "--cache", missing),
	}
	planOutput := run(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": folder}, "plan", "--github-matrix", mfile)
	cases := map[int][]error{
		ExitOK: {nil, flag.ErrHelp, invalid(flag.ErrHelp)},
		ExitFailed: append([]error{runEnd{outcome: buildsFailed}, errors.New("cache verify: an entry is corrupt"),
			internalError{value: "a bug"}, fmt.Errorf("cannot find my own executable: %w", os.ErrNotExist)}, unreadable...),
		ExitInvalid: append([]error{usagef("--jobs 0: must be at least 1"), matrix.Errors{{Msg: "bad"}}, runfiles.Collisions{{Msg: "overlap"}},
			&cache.LibraryUnknownError{Backend: "tensorrt"}, invalid(errors.New("no engine cache at c")), errors.Join(usagef("a"), usagef("b"))}, absent...),
		ExitBudget: {runEnd{outcome: overBudget}},
		ExitOutput: {unwritable, runEnd{outputs: unwritable}, runEnd{outcome: buildsFailed, outputs: unwritable},
			runEnd{outcome: overBudget, outputs: unwritable}, planOutput},
		ExitInterrupted: {runEnd{outcome: sigint}, runEnd{outcome: sigint, outputs: unwritable}},
		ExitTerminated:  {runEnd{outcome: sigterm}, runEnd{outcome: sigterm, outputs: unwritable}},
	}
	table := exitCodeTable(t)
	for code, meaning := range table {
		if len(cases[code]) == 0 {
			t.Errorf("exit code %d (%s) is documented, and no error here maps to it", code, meaning)
		}
	}
	for _, code := range slices.Sorted(maps.Keys(cases)) {
		if _, ok := table[code]; !ok {
			t.Errorf("exit code %d is not in the documented table", code)
		}
		for _, err := range cases[code] {
			if got := exitCode(err); got != code {
				t.Errorf("exitCode(%T: %v) = %d, want %d", err, err, got, code)
			}
		}
	}
}
