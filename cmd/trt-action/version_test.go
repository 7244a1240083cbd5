package main

import (
	"strings"
	"testing"
)

// TestVersionFlag: --version and -V print the first line of `trt-action
// version` alone and exit 0, as every other program answers them.
func TestVersionFlag(t *testing.T) {
	full, err := command(t.TempDir(), nil, "version").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	first, _, _ := strings.Cut(string(full), "\n")
	if !strings.HasPrefix(first, "trt-action ") {
		t.Fatalf("version's first line is %q", first)
	}
	for _, flag := range []string{"--version", "-V"} {
		cmd := command(t.TempDir(), nil, flag)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if code := exitCode(err); code != 0 || string(out) != first+"\n" || stderr.Len() != 0 {
			t.Errorf("trt-action %s: exit %d, stdout %q, stderr %q; want exit 0 and %q", flag, code, out, stderr.String(), first+"\n")
		}
	}
}
