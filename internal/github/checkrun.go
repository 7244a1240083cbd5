package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/trt-action/trt-action/internal/report"

	"github.com/trt-action/trt-action/internal/text"
)

// API limits for check runs.
const (
	annotationsPerRequest = 50
	maxCheckText          = 65535
	maxAnnotationMessage  = 64 * 1024
	maxAnnotationTitle    = 255
)

// checkRunOptions describes the check run to publish.
type checkRunOptions struct {
	Name       string // check name; "trt-action" when empty
	HeadSHA    string // the commit it belongs to (a pull request's head)
	DetailsURL string // link to the workflow run; optional
	Title      string // output title; "N of M builds succeeded" when empty
	Summary    string // markdown output summary, cut to 65,535 characters
	Conclusion string // success, failure, cancelled...; from the report when empty
	// Locate returns the file and line a build's annotation points at (its
	// entry in the matrix file). When nil, annotations point at line 1 of
	// the report's matrix file.
	Locate func(build string) (path string, line int)
}

// publishCheckRun creates a completed check run for r with one annotation
// per build that did not succeed. The API takes at most 50 annotations per
// request, so the run is created with the first 50 and updated with the
// rest; it is completed by the last request, so it never shows as done
// with half its annotations.
func (c *client) publishCheckRun(ctx context.Context, r *report.Report, opts checkRunOptions) (int64, error) {
	if opts.HeadSHA == "" {
		return 0, fmt.Errorf("create check run: no commit SHA")
	}
	name := opts.Name
	if name == "" {
		name = "trt-action"
	}
	conclusion := opts.Conclusion
	if conclusion == "" {
		conclusion = conclusionOf(r)
	}
	batches := batch(annotations(r, opts.Locate), annotationsPerRequest)
	output := func(i int) *gh.CheckRunOutput {
		o := &gh.CheckRunOutput{
			Title:   gh.String(orDefault(opts.Title, title(r))),
			Summary: gh.String(text.CutAtLine(orDefault(opts.Summary, plainSummary(r)), maxCheckText)),
		}
		if i < len(batches) {
			o.Annotations = batches[i]
		}
		return o
	}
	last := max(0, len(batches)-1)

	create := gh.CreateCheckRunOptions{Name: name, HeadSHA: opts.HeadSHA, Output: output(0)}
	if opts.DetailsURL != "" {
		create.DetailsURL = gh.String(opts.DetailsURL)
	}
	if last == 0 {
		create.Status, create.Conclusion = gh.String("completed"), gh.String(conclusion)
	} else {
		create.Status = gh.String("in_progress")
	}
	run, _, err := c.api.Checks.CreateCheckRun(ctx, c.owner, c.repo, create)
	if err != nil {
		return 0, apiError("create check run", err)
	}
	id := run.GetID()
	for i := 1; i <= last; i++ {
		update := gh.UpdateCheckRunOptions{Name: name, Output: output(i)}
		if i == last {
			update.Status, update.Conclusion = gh.String("completed"), gh.String(conclusion)
		}
		if _, _, err := c.api.Checks.UpdateCheckRun(ctx, c.owner, c.repo, id, update); err != nil {
			return id, apiError("update check run", err)
		}
	}
	return id, nil
}

// annotations makes one annotation per build that did not succeed: failures
// as "failure", builds that never finished as "warning". A script build's
// says what went wrong inside it (annotationMessage).
func annotations(r *report.Report, locate func(string) (string, int)) []*gh.CheckRunAnnotation {
	var out []*gh.CheckRunAnnotation
	for _, b := range r.Builds {
		if report.Succeeded(b.Status) {
			continue
		}
		path, line := r.Matrix, 1
		if locate != nil {
			path, line = locate(b.Name)
		}
		if path == "" {
			path = "trt-builds.yml"
		}
		line = max(line, 1)
		level := "warning"
		if isFailure(b.Status) {
			level = "failure"
		}
		out = append(out, &gh.CheckRunAnnotation{
			Path:            gh.String(path),
			StartLine:       gh.Int(line),
			EndLine:         gh.Int(line),
			AnnotationLevel: gh.String(level),
			Title:           gh.String(text.CutRunes(text.Plain(b.Name+": "+b.Status), maxAnnotationTitle)),
			Message:         gh.String(text.CutRunes(annotationMessage(&b), maxAnnotationMessage)),
		})
	}
	return out
}

// annotationMessage is why the build did not succeed: its reason, and for
// a build that ran a command how the command ended, the TensorRT builds
// inside that did not succeed and its last lines of output, a line each.
func annotationMessage(b *report.Build) string {
	lines := []string{text.Plain(orDefault(b.Reason, "build "+b.Status))}
	for _, l := range report.ScriptDetail(b) {
		lines = append(lines, text.Plain(l))
	}
	return strings.Join(lines, "\n")
}

func batch[T any](items []T, size int) [][]T {
	var out [][]T
	for len(items) > size {
		out = append(out, items[:size])
		items = items[size:]
	}
	if len(items) > 0 {
		out = append(out, items)
	}
	return out
}

// conclusionOf maps a report to a check-run conclusion: failure if any build
// failed, cancelled if the run was cut short, else success.
func conclusionOf(r *report.Report) string {
	stopped := !r.Complete
	for _, b := range r.Builds {
		if isFailure(b.Status) {
			return "failure"
		}
		if !report.Succeeded(b.Status) {
			stopped = true
		}
	}
	if stopped {
		return "cancelled"
	}
	return "success"
}

// title is the default check-run title: "3 of 4 builds succeeded", or
// with cache hits "20 of 20 builds succeeded (8 cached)".
func title(r *report.Report) string {
	ok, cached := 0, 0
	for _, b := range r.Builds {
		if report.Succeeded(b.Status) {
			ok++
		}
		if b.Status == report.StatusCached {
			cached++
		}
	}
	noun := "builds"
	if len(r.Builds) == 1 {
		noun = "build"
	}
	title := fmt.Sprintf("%d of %d %s succeeded", ok, len(r.Builds), noun)
	if cached > 0 {
		title += fmt.Sprintf(" (%d cached)", cached)
	}
	return title
}

func isFailure(status string) bool {
	switch status {
	case report.StatusFailed, report.StatusBudgetExceeded, report.StatusCrashed, report.StatusKilled:
		return true
	}
	return false
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
