// Package actionstest models how the GitHub Actions runner reads a step's
// output, for tests in any package; nothing in the shipped binary imports it.
package actionstest

import (
	"strings"
	"unicode"

	"github.com/trt-action/trt-action/internal/actions"
)

// RunnerCommands returns the lines of output that the runner would act on as
// workflow commands, following its rules: lines split at \r and \n; a
// trimmed line starting "::" (or any line holding "##[") is a command; after
// "::stop-commands::T" every command is ignored until "::T::". It is
// deliberately stricter than the runner (a "::" line without a closing "::"
// still counts), so tests built on it err on the safe side.
func RunnerCommands(output string) []string {
	var run []string
	stopToken := ""
	for _, line := range actions.SplitLines(output) {
		t := strings.TrimLeftFunc(line, unicode.IsSpace)
		if stopToken != "" {
			if name, _, ok := parseCommand(t); ok && name == stopToken {
				stopToken = ""
				run = append(run, line)
			}
			continue
		}
		if !isCommandLine(line) {
			continue
		}
		run = append(run, line)
		if name, data, ok := parseCommand(t); ok && name == "stop-commands" && data != "" {
			stopToken = data
		}
	}
	return run
}

// parseCommand splits "::name props::data" into name and data.
func parseCommand(t string) (name, data string, ok bool) {
	if !strings.HasPrefix(t, "::") {
		return "", "", false
	}
	end := strings.Index(t[2:], "::")
	if end < 0 {
		return "", "", false
	}
	info := t[2 : 2+end]
	name, _, _ = strings.Cut(info, " ")
	return name, t[2+end+2:], true
}

// isCommandLine reports whether the runner would treat line as a workflow
// command when commands are not stopped (conservatively: any trimmed "::"
// start, or any "##[").
func isCommandLine(line string) bool {
	t := strings.TrimLeftFunc(line, unicode.IsSpace)
	return strings.HasPrefix(t, "::") || strings.Contains(line, "##[")
}
