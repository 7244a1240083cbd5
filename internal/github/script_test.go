package github

import (
	"fmt"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// A failed script build's check-run annotation says what went wrong inside
// the command: how it ended, the TensorRT builds that did not succeed and
// its last lines of output; the unobserved one, which succeeded, has none.
func TestCheckRunAnnotationsOfScriptBuilds(t *testing.T) {
	var got strings.Builder
	for _, a := range annotations(reporttest.Scripts(), nil) {
		fmt.Fprintf(&got, "%s %s:%d %s\n%s\n\n", a.GetAnnotationLevel(), a.GetPath(), a.GetStartLine(), a.GetTitle(), a.GetMessage())
	}
	golden.Check(t, "annotations-scripts.golden", got.String())
	for _, want := range []string{
		"command python3 export.py --model yolo11n.pt --dynamic: exit status 1; 2 TensorRT builds\n",
		"TensorRT build 2: budget-exceeded after 15.0s",
		"  TypeError: a bytes-like object is required, not 'NoneType'",
		"command trtllm-build --checkpoint_dir ckpt --output_dir engines: killed by signal SIGABRT; 1 TensorRT build\n",
	} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("annotations lack %q:\n%s", want, got.String())
		}
	}
	if strings.Contains(got.String(), "mnist-isolated") {
		t.Error("a script build that succeeded was annotated")
	}
}

// The comment renders the job summary: a report of script builds with
// many TensorRT builds still fits GitHub's limit, with their sections.
func TestCommentOfScriptBuildsFits(t *testing.T) {
	r := reporttest.Scripts()
	yolo := &r.Builds[1]
	for len(yolo.TensorRTBuilds) < 300 {
		b := yolo.TensorRTBuilds[0]
		b.Index = len(yolo.TensorRTBuilds) + 1
		yolo.TensorRTBuilds = append(yolo.TensorRTBuilds, b)
	}
	for i := range 40 {
		b := r.Builds[1]
		b.Name = fmt.Sprintf("export-%d", i)
		r.Builds = append(r.Builds, b)
	}
	body := commentBody("<!-- trt-action:k -->", r, ReportSummary(nil), "")
	if len(body) > maxCommentChars {
		t.Fatalf("comment of %d bytes, over %d", len(body), maxCommentChars)
	}
	if !strings.Contains(body, "### TensorRT builds in yolo-export") {
		t.Errorf("the comment has no script section:\n%s", body)
	}
	if strings.Contains(body, "This comment was shortened") {
		t.Error("the summary was cut by the comment, not shortened by its renderer")
	}
}
