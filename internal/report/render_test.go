package report

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Every golden summary, drawn by Mermaid 11 in headless Chromium
// (scripts/render-markdown), has no diagram GitHub would show as an error.
// It installs Chromium and npm packages on first use, so it runs when
// TRT_ACTION_RENDER=1 (scripts/test sets it) and in CI, where it fails
// rather than skips; the screenshots go to $TRT_ACTION_RENDER_DIR if set.
func TestGoldenSummariesRenderWithoutMermaidErrors(t *testing.T) {
	if os.Getenv("TRT_ACTION_RENDER") != "1" && os.Getenv("CI") != "true" {
		t.Skip("set TRT_ACTION_RENDER=1 to draw the golden summaries in a browser (scripts/test does)")
	}
	goldens, err := filepath.Glob("testdata/*.md")
	if err != nil || len(goldens) < 2 {
		t.Fatalf("golden summaries: %v %v", goldens, err)
	}
	out := os.Getenv("TRT_ACTION_RENDER_DIR")
	if out == "" {
		out = t.TempDir()
	}
	for _, md := range goldens {
		png := filepath.Join(out, filepath.Base(md)+".png")
		cmd := exec.Command("../../scripts/render-markdown", md, png)
		got, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 3:
			t.Errorf("%s: Mermaid cannot draw it:\n%s", md, got)
		case err != nil:
			t.Errorf("%s: render-markdown failed: %v\n%s", md, err, got)
		}
		if st, err := os.Stat(png); err == nil && st.Size() < 10_000 {
			t.Errorf("%s: screenshot of %d bytes", md, st.Size())
		}
	}
}
