package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/github"
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/report"
)

// publishFlags are the GitHub integration flags shared by build and merge.
type publishFlags struct {
	junit      string
	comment    string
	commentKey string
	checkRun   bool
}

// publishInputs maps those flags to the action's inputs.
var publishInputs = map[string]string{"junit": "junit", "comment": "comment", "comment-key": "comment-key", "check-run": "check-run"}

func (p *publishFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.junit, "junit", "", "write a JUnit XML `file`: one test case per build")
	fs.StringVar(&p.comment, "comment", github.CommentOff, "pull-request comment: off, pull-request, or always (also on commits without a pull request)")
	fs.StringVar(&p.commentKey, "comment-key", "", "a `key` telling apart the comments of jobs that share a workflow and job id, such as matrix legs (e.g. the leg's GPU)")
	fs.BoolVar(&p.checkRun, "check-run", false, "publish a check run with an annotation per build that did not succeed")
}

// publishTimeout bounds the GitHub API calls: a slow API must not hold a
// finished run hostage.
const publishTimeout = 60 * time.Second

// check refuses a --comment mode that publishing would only reject after
// every build has run.
func (p publishFlags) check() error {
	if _, err := github.ParseCommentMode(p.comment); err != nil {
		return usagef("--comment %q: allowed: %s, %s, %s", p.comment, github.CommentOff, github.CommentPullRequest, github.CommentAlways)
	}
	return nil
}

// publish posts the comment and check run, after the run's last summary
// was written by out. It never changes the run's exit code: a token that
// may not write gives a notice in the log and at the end of the summary,
// any other error a warning in the log.
func (c *Command) publish(p publishFlags, r *report.Report, out *outputs.Outputs, locate func(string) (string, int)) {
	if p.comment == github.CommentOff && !p.checkRun {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	gha := c.actions()
	done, err := github.Publish(ctx, github.EnvFrom(c.Getenv), github.Options{
		Token:      c.githubToken(),
		Comment:    p.comment,
		CommentKey: p.commentKey,
		CheckRun:   p.checkRun,
		Summary:    github.ReportSummary(out.Extra),
		Locate:     locate,
	}, r)
	for _, n := range done.Notices {
		c.note(gha, actions.LevelNotice, "GitHub", n)
	}
	if err := out.AppendToSummary(github.NotesMarkdown(done.Notices)); err != nil {
		c.note(gha, actions.LevelWarning, "GitHub", err.Error())
	}
	if err != nil {
		c.note(gha, actions.LevelWarning, "GitHub", "publishing to GitHub failed: "+err.Error())
	}
	if done.CommentURL != "" {
		fmt.Fprintf(c.Streams.Err, "trt-action: comment: %s\n", done.CommentURL)
	}
}

// githubToken is the github-token input, else GITHUB_TOKEN. It is never
// taken from a flag: command lines are visible to every process.
func (c *Command) githubToken() string {
	if t := c.actions().Input("github-token"); t != "" {
		return t
	}
	return c.Getenv("GITHUB_TOKEN")
}

// note writes an annotation in Actions (an annotation cannot be fenced, so
// actions.Annotation neutralises the text) and a plain line elsewhere.
func (c *Command) note(gha *actions.Actions, level, title, msg string) {
	if gha.InActions() {
		fmt.Fprintln(c.Streams.Out, actions.Annotation(level, title, msg, "", 0))
		return
	}
	fmt.Fprintf(c.Streams.Err, "trt-action: %s\n", msg)
}
