package github

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// A run whose code comes from another repository than the workflow's own
// (a pull request from a fork) must not write what other runs deliver,
// such as the shared engine cache store: the code it checks out and runs
// is whoever opened the pull request's. pull_request_target and
// workflow_run runs are the dangerous ones: they get the base
// repository's secrets and token, and a workflow that checks out the
// pull request's head then runs a stranger's code with them (GitHub
// Security Lab, "Keeping your GitHub Actions and workflows secure:
// Preventing pwn requests",
// https://securitylab.github.com/resources/github-actions-preventing-pwn-requests/).

// headEvents are the events whose payload names the repository the code
// under test comes from, and where: the pull request's head repository, or
// the triggering run's. A review and a review comment on a pull request
// run its merge commit (GITHUB_REF refs/pull/N/merge), as pull_request
// does (https://docs.github.com/en/actions/writing-workflows/choosing-when-your-workflow-runs/events-that-trigger-workflows#pull_request_review),
// and their payloads name the pull request as its events do.
var headEvents = map[string]func(p *headPayload) (name string, ok bool){
	"pull_request":                pullRequestHead,
	"pull_request_target":         pullRequestHead,
	"pull_request_review":         pullRequestHead,
	"pull_request_review_comment": pullRequestHead,
	"workflow_run": func(p *headPayload) (string, bool) {
		if p.WorkflowRun == nil || p.WorkflowRun.HeadRepository == nil {
			return "", false
		}
		return p.WorkflowRun.HeadRepository.FullName, true
	},
}

func pullRequestHead(p *headPayload) (string, bool) {
	if p.PullRequest == nil || p.PullRequest.Head.Repo == nil {
		return "", false // a head repository that was deleted is null
	}
	return p.PullRequest.Head.Repo.FullName, true
}

// headPayload is the part of the event payload that names the head
// repository.
type headPayload struct {
	PullRequest *struct {
		Head struct {
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
	} `json:"pull_request"`
	WorkflowRun *struct {
		HeadRepository *struct {
			FullName string `json:"full_name"`
		} `json:"head_repository"`
	} `json:"workflow_run"`
}

// ForeignHead says why the code this run executes may come from another
// repository than the workflow's (GITHUB_REPOSITORY): a pull_request,
// pull_request_target, pull_request_review, pull_request_review_comment
// or workflow_run run whose head repository is another, or whose event file does not say (it cannot be read, or names
// none: the safe answer is "foreign"). "" for a run of the repository's
// own code, and for every other event. GitHub compares repository names
// without case, and so does this.
func ForeignHead(env Env) string {
	head, ok := headEvents[env.EventName]
	if !ok {
		return ""
	}
	if env.EventPath == "" {
		return fmt.Sprintf("this %s run has no event file (GITHUB_EVENT_PATH), so where its code comes from is not known", env.EventName)
	}
	data, err := os.ReadFile(env.EventPath)
	if err != nil {
		return fmt.Sprintf("this %s run's event file cannot be read (%v), so where its code comes from is not known", env.EventName, err)
	}
	var p headPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Sprintf("this %s run's event file is not JSON (%v), so where its code comes from is not known", env.EventName, err)
	}
	name, ok := head(&p)
	switch {
	case !ok || name == "":
		return fmt.Sprintf("this %s run's event names no head repository (a deleted fork?)", env.EventName)
	case !strings.EqualFold(name, env.Repository):
		return fmt.Sprintf("this %s run's code comes from %s, not %s", env.EventName, name, env.Repository)
	}
	return ""
}
