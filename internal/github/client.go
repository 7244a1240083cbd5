// Package github publishes a run's report to GitHub: a sticky pull-request
// (or commit) comment that is edited on every later run, and a check run with
// one annotation per build that did not succeed. It talks to the REST API
// through go-github, at GITHUB_API_URL so GitHub Enterprise Server works.
package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// Env is what the runner tells a step about its run.
type Env struct {
	APIURL     string // GITHUB_API_URL: https://api.github.com, or https://HOST/api/v3 on GHES
	ServerURL  string // GITHUB_SERVER_URL, for links back to the run
	Repository string // GITHUB_REPOSITORY: owner/name
	EventName  string // GITHUB_EVENT_NAME
	EventPath  string // GITHUB_EVENT_PATH: the webhook payload that started the run
	Workflow   string // GITHUB_WORKFLOW: the workflow's name
	Job        string // GITHUB_JOB: the job's id
	SHA        string // GITHUB_SHA
	RunID      string // GITHUB_RUN_ID
}

// EnvFrom reads Env with getenv (os.Getenv outside tests).
func EnvFrom(getenv func(string) string) Env {
	return Env{
		APIURL:     getenv("GITHUB_API_URL"),
		ServerURL:  getenv("GITHUB_SERVER_URL"),
		Repository: getenv("GITHUB_REPOSITORY"),
		EventName:  getenv("GITHUB_EVENT_NAME"),
		EventPath:  getenv("GITHUB_EVENT_PATH"),
		Workflow:   getenv("GITHUB_WORKFLOW"),
		Job:        getenv("GITHUB_JOB"),
		SHA:        getenv("GITHUB_SHA"),
		RunID:      getenv("GITHUB_RUN_ID"),
	}
}

// runURL links to the workflow run, or "" when the environment lacks a part.
func (e Env) runURL() string {
	if e.ServerURL == "" || e.Repository == "" || e.RunID == "" {
		return ""
	}
	return strings.TrimSuffix(e.ServerURL, "/") + "/" + e.Repository + "/actions/runs/" + e.RunID
}

// workflowEvent is the part of the event payload this package needs.
type workflowEvent struct {
	PullRequest int // the pull request's number; 0 when the run is not for one
	// HeadSHA is the commit that was built, where its checks show: the pull
	// request's head, or the triggering run's head commit. Empty when the
	// payload does not say (issue_comment: look it up by PullRequest).
	HeadSHA string
}

// eventPayload covers pull_request(_target) and pull_request_review(_comment)
// events, which carry pull_request; issue_comment events, which carry
// issue (with a pull_request key only when the issue is a pull request) and
// no commit; and workflow_run events, which carry the triggering run's head
// commit and the pull requests it belongs to (none for pull requests from
// forks, which GitHub leaves out of that list).
type eventPayload struct {
	PullRequest *struct {
		Number int `json:"number"`
		Head   struct {
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
	Issue *struct {
		Number      int              `json:"number"`
		PullRequest *json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	WorkflowRun *struct {
		HeadSHA      string `json:"head_sha"`
		PullRequests []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
	} `json:"workflow_run"`
}

// readEvent reads the event file. A missing path gives a zero workflowEvent: runs
// started by hand or outside Actions have no pull request.
func readEvent(path string) (workflowEvent, error) {
	if path == "" {
		return workflowEvent{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return workflowEvent{}, fmt.Errorf("event file: %w", err)
	}
	return parseEvent(data)
}

func parseEvent(data []byte) (workflowEvent, error) {
	var p eventPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return workflowEvent{}, fmt.Errorf("event file: %w", err)
	}
	switch {
	case p.PullRequest != nil:
		return workflowEvent{PullRequest: p.PullRequest.Number, HeadSHA: p.PullRequest.Head.SHA}, nil
	case p.Issue != nil && p.Issue.PullRequest != nil:
		return workflowEvent{PullRequest: p.Issue.Number}, nil
	case p.WorkflowRun != nil:
		ev := workflowEvent{HeadSHA: p.WorkflowRun.HeadSHA}
		if len(p.WorkflowRun.PullRequests) > 0 {
			ev.PullRequest = p.WorkflowRun.PullRequests[0].Number
		}
		return ev, nil
	}
	return workflowEvent{}, nil
}

// pullRequestHead returns the head commit of pull request number.
func (c *client) pullRequestHead(ctx context.Context, number int) (string, error) {
	pr, _, err := c.api.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		// Not apiError: a refused read is no write permission problem.
		return "", fmt.Errorf("get pull request #%d: %w", number, err)
	}
	return pr.GetHead().GetSHA(), nil
}

// errNoPermission is what a 403 or 404 on a write means in Actions: the
// token may not write there, as for pull requests from forks, which get a
// read-only token. Callers turn it into a notice; it never fails a run.
var errNoPermission = errors.New("the token may not write to this repository")

// permissionError is a refused request; errors.Is(err, errNoPermission) holds.
type permissionError struct {
	Op     string // "create comment", "update check run"...
	Status int    // 403 or 404
	Detail string // GitHub's message
}

func (e *permissionError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d: %v", e.Op, e.Status, errNoPermission)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func (e *permissionError) Unwrap() error { return errNoPermission }

// apiError names the operation and turns refusals into a permissionError.
// Rate limits are also 403s but go-github reports them as their own types,
// so they stay ordinary errors.
func apiError(op string, err error) error {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusForbidden, http.StatusNotFound:
			return &permissionError{Op: op, Status: er.Response.StatusCode, Detail: er.Message}
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// client writes comments and check runs for one repository.
type client struct {
	api   *gh.Client
	owner string
	repo  string
}

// newClient makes a client for env's repository, authenticated with token,
// at env.APIURL when set. httpClient may be nil.
func newClient(token string, env Env, httpClient *http.Client) (*client, error) {
	if token == "" {
		return nil, errors.New("github: no token (set the github-token input)")
	}
	owner, repo, ok := strings.Cut(env.Repository, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("github: GITHUB_REPOSITORY %q is not owner/name", env.Repository)
	}
	api := gh.NewClient(httpClient).WithAuthToken(token)
	if env.APIURL != "" {
		base, err := apiBase(env.APIURL)
		if err != nil {
			return nil, err
		}
		api.BaseURL = base
	}
	return &client{api: api, owner: owner, repo: repo}, nil
}

// apiBase parses GITHUB_API_URL as go-github's BaseURL, which must end in a
// slash. Unlike WithEnterpriseURLs it adds no /api/v3: the runner's
// GITHUB_API_URL already has it on GHES.
func apiBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("github: GITHUB_API_URL %q is not an absolute URL", raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}
