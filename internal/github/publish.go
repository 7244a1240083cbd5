package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/trt-action/trt-action/internal/report"
)

// Comment modes (the action's comment input).
const (
	CommentOff         = "off"
	CommentPullRequest = "pull-request" // comment on the run's pull request, if any
	CommentAlways      = "always"       // also on the commit when there is no pull request
)

// ParseCommentMode checks a comment input value.
func ParseCommentMode(s string) (string, error) {
	switch s {
	case CommentOff, CommentPullRequest, CommentAlways:
		return s, nil
	case "":
		return CommentPullRequest, nil
	}
	return "", fmt.Errorf("comment: %q is not one of off, pull-request, always", s)
}

// Options says what to publish.
type Options struct {
	Token    string
	Comment  string // CommentOff, CommentPullRequest or CommentAlways
	CheckRun bool
	// Summary renders the report as markdown for the comment and the check
	// run (report.Summary); nil uses a plain table.
	Summary func(*report.Report) string
	// Locate points a build's annotation at its matrix entry; may be nil.
	Locate     func(build string) (path string, line int)
	HTTPClient *http.Client // nil: http.DefaultClient
}

// Outcome is what Publish did, for the log.
type Outcome struct {
	CommentURL string
	Commented  bool // false when nothing was commented (off, no pull request, or refused)
	CheckRunID int64
	// Notices are for the log and the job summary: writes the token was
	// not allowed to make (pull requests from forks) and why nothing was
	// published. They never mean the run failed.
	Notices []string
}

// Publish writes the sticky comment and the check run that opts ask for.
// Refused writes become notices; other errors are joined and returned for
// the caller to log as warnings. Publishing never decides a run's outcome.
func Publish(ctx context.Context, env Env, opts Options, r *report.Report) (Outcome, error) {
	var out Outcome
	mode, err := ParseCommentMode(opts.Comment)
	if err != nil {
		return out, err
	}
	if mode == CommentOff && !opts.CheckRun {
		return out, nil
	}
	event, err := ReadEvent(env.EventPath)
	if err != nil {
		return out, err
	}
	target, comment := commentTarget(mode, event, env)
	if !comment && !opts.CheckRun {
		return out, nil // not a pull request: nothing to do, no token needed
	}
	client, err := NewClient(opts.Token, env, opts.HTTPClient)
	if err != nil {
		return out, err
	}
	var errs []error
	if comment {
		marker := Marker(env.Workflow, env.Job)
		res, err := client.StickyComment(ctx, target, marker, func(previous string) string {
			return CommentBody(marker, r, opts.Summary, previous)
		})
		switch {
		case errors.Is(err, ErrNoPermission):
			out.Notices = append(out.Notices, fmt.Sprintf("trt-action could not comment on %s: %v. Pull requests from forks get a read-only token; the results are in the job summary.", target, err))
		case err != nil:
			errs = append(errs, err)
		default:
			out.CommentURL, out.Commented = res.URL, true
		}
	}
	if opts.CheckRun {
		id, err := client.PublishCheckRun(ctx, r, CheckRunOptions{
			HeadSHA:    firstNonEmpty(event.HeadSHA, env.SHA),
			DetailsURL: env.RunURL(),
			Summary:    summaryOf(opts.Summary, r),
			Locate:     opts.Locate,
		})
		out.CheckRunID = id
		switch {
		case errors.Is(err, ErrNoPermission):
			out.Notices = append(out.Notices, fmt.Sprintf("trt-action could not create a check run: %v. The workflow needs `permissions: checks: write`; pull requests from forks never get it.", err))
		case err != nil:
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// commentTarget picks where the comment goes for mode; ok is false when
// there is nowhere to comment.
func commentTarget(mode string, event Event, env Env) (Target, bool) {
	switch {
	case mode == CommentOff:
		return Target{}, false
	case event.PullRequest != 0:
		return Target{PullRequest: event.PullRequest}, true
	case mode == CommentAlways && env.SHA != "":
		return Target{Commit: env.SHA}, true
	}
	return Target{}, false
}

func (t Target) String() string {
	if t.PullRequest != 0 {
		return fmt.Sprintf("pull request #%d", t.PullRequest)
	}
	return "commit " + t.Commit
}

func summaryOf(summary func(*report.Report) string, r *report.Report) string {
	if summary == nil {
		return plainSummary(r)
	}
	return summary(r)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
