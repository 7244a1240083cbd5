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

// SummaryFunc renders r as markdown of at most maxBytes bytes, dropping
// whole sections rather than cutting lines where it can. Longer output is
// cut at a line end.
type SummaryFunc func(r *report.Report, maxBytes int) string

// Options says what to publish.
type Options struct {
	Token   string
	Comment string // CommentOff, CommentPullRequest or CommentAlways
	// CommentKey tells apart comments of one workflow job: the legs of a
	// matrix job share GITHUB_JOB, so each leg that comments needs its own
	// key (such as the leg's GPU). Empty for a job that runs once.
	CommentKey string
	CheckRun   bool
	// Summary renders the report as markdown for the comment and the check
	// run (report.Summary) in at most maxBytes; nil uses a plain table.
	Summary SummaryFunc
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
	event, err := readEvent(env.EventPath)
	if err != nil {
		return out, err
	}
	target, comment := commentTarget(mode, event, env)
	if !comment && !opts.CheckRun {
		return out, nil // not a pull request: nothing to do, no token needed
	}
	client, err := newClient(opts.Token, env, opts.HTTPClient)
	if err != nil {
		return out, err
	}
	var errs []error
	if comment {
		marker := Marker(env.Workflow, env.Job, opts.CommentKey)
		res, err := client.stickyComment(ctx, target, marker, func(previous string) string {
			return commentBody(marker, r, opts.Summary, previous)
		})
		switch {
		case errors.Is(err, errNoPermission):
			out.Notices = append(out.Notices, fmt.Sprintf("trt-action could not comment on %s: %v. Pull requests from forks get a read-only token; the results are in the job summary.", target, err))
		case err != nil:
			errs = append(errs, err)
		default:
			out.CommentURL, out.Commented = res.URL, true
		}
	}
	if opts.CheckRun {
		headSHA, notice := client.checkRunCommit(ctx, event, env)
		if notice != "" {
			out.Notices = append(out.Notices, notice)
		}
		id, err := client.publishCheckRun(ctx, r, checkRunOptions{
			HeadSHA:    headSHA,
			DetailsURL: env.runURL(),
			Summary:    summaryOf(opts.Summary, r, maxCheckText),
			Locate:     opts.Locate,
		})
		out.CheckRunID = id
		switch {
		case errors.Is(err, errNoPermission):
			out.Notices = append(out.Notices, fmt.Sprintf("trt-action could not create a check run: %v. The workflow needs `permissions: checks: write`; pull requests from forks never get it.", err))
		case err != nil:
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// commentTarget picks where the comment goes for mode; ok is false when
// there is nowhere to comment.
func commentTarget(mode string, event workflowEvent, env Env) (target, bool) {
	switch {
	case mode == CommentOff:
		return target{}, false
	case event.PullRequest != 0:
		return target{PullRequest: event.PullRequest}, true
	case mode == CommentAlways && firstNonEmpty(event.HeadSHA, env.SHA) != "":
		// A workflow_run's GITHUB_SHA is the default branch's head, not
		// the commit that was built.
		return target{Commit: firstNonEmpty(event.HeadSHA, env.SHA)}, true
	}
	return target{}, false
}

func (t target) String() string {
	if t.PullRequest != 0 {
		return fmt.Sprintf("pull request #%d", t.PullRequest)
	}
	return "commit " + t.Commit
}

// checkRunCommit is the commit the check run belongs to: the pull request's
// head, where its checks show. An issue_comment event names only the pull
// request, so its head is looked up; when that fails, GITHUB_SHA (the
// default branch's head for such events) is used with a notice saying so.
func (c *client) checkRunCommit(ctx context.Context, event workflowEvent, env Env) (sha, notice string) {
	if event.HeadSHA != "" || event.PullRequest == 0 {
		return firstNonEmpty(event.HeadSHA, env.SHA), ""
	}
	head, err := c.pullRequestHead(ctx, event.PullRequest)
	if err == nil && head != "" {
		return head, ""
	}
	if err == nil {
		err = errors.New("the API returned no head commit")
	}
	return env.SHA, fmt.Sprintf("trt-action could not look up the head commit of pull request #%d (%v); the check run goes to GITHUB_SHA %s instead and may not show on the pull request.", event.PullRequest, err, env.SHA)
}

// summaryOf renders the report in at most maxBytes with summary, or as a
// plain table when summary is nil; the result may still be longer and is
// cut by the caller.
func summaryOf(summary SummaryFunc, r *report.Report, maxBytes int) string {
	if summary == nil {
		return plainSummary(r)
	}
	return summary(r, maxBytes)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
