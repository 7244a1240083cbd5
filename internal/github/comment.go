package github

import (
	"context"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// Marker is the hidden line that identifies the comment of one workflow's
// job, so each job keeps exactly one comment. Characters that could end the
// HTML comment early are replaced.
func Marker(workflow, job string) string {
	return "<!-- trt-action:" + markerSafe(workflow) + ":" + markerSafe(job) + " -->"
}

func markerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		case strings.ContainsRune(" ._/()", r):
			return r
		}
		return '_'
	}, s)
}

// Target is where a comment goes: a pull request when PullRequest is set,
// otherwise the commit Commit.
type Target struct {
	PullRequest int
	Commit      string
}

// CommentResult says what StickyComment did.
type CommentResult struct {
	ID      int64
	URL     string
	Created bool // false: an existing comment was edited
}

// StickyComment finds the comment holding marker on target, searching every
// page, and replaces its body with render(previous body); without one, it
// creates a comment with render(""). The body must contain marker for the
// next run to find it. Refused writes return a *PermissionError.
func (c *Client) StickyComment(ctx context.Context, target Target, marker string, render func(previous string) string) (CommentResult, error) {
	store := c.commentStore(target)
	found, err := findMarked(ctx, store, marker)
	if err != nil {
		return CommentResult{}, err
	}
	if found == nil {
		id, url, err := store.create(ctx, render(""))
		return CommentResult{ID: id, URL: url, Created: true}, err
	}
	url, err := store.edit(ctx, found.id, render(found.body))
	return CommentResult{ID: found.id, URL: url}, err
}

type storedComment struct {
	id   int64
	body string
}

// commentStore hides the difference between pull-request comments and
// commit comments, which live at different endpoints with the same shape.
type commentStore interface {
	list(ctx context.Context, page int) (comments []storedComment, nextPage int, err error)
	create(ctx context.Context, body string) (id int64, url string, err error)
	edit(ctx context.Context, id int64, body string) (url string, err error)
}

// perPage is the API's maximum page size, to need as few pages as possible.
const perPage = 100

// findMarked walks pages until the marker turns up; go-github paginates
// only when asked, so following NextPage is on us.
func findMarked(ctx context.Context, store commentStore, marker string) (*storedComment, error) {
	for page := 1; page != 0; {
		comments, next, err := store.list(ctx, page)
		if err != nil {
			return nil, err
		}
		for _, cm := range comments {
			if strings.Contains(cm.body, marker) {
				return &cm, nil
			}
		}
		page = next
	}
	return nil, nil
}

func (c *Client) commentStore(t Target) commentStore {
	if t.PullRequest != 0 {
		return &issueComments{c: c, number: t.PullRequest}
	}
	return &commitComments{c: c, sha: t.Commit}
}

type issueComments struct {
	c      *Client
	number int
}

func (s *issueComments) list(ctx context.Context, page int) ([]storedComment, int, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{Page: page, PerPage: perPage}}
	cs, resp, err := s.c.api.Issues.ListComments(ctx, s.c.owner, s.c.repo, s.number, opts)
	if err != nil {
		return nil, 0, apiError("list pull request comments", err)
	}
	out := make([]storedComment, len(cs))
	for i, cm := range cs {
		out[i] = storedComment{id: cm.GetID(), body: cm.GetBody()}
	}
	return out, resp.NextPage, nil
}

func (s *issueComments) create(ctx context.Context, body string) (int64, string, error) {
	cm, _, err := s.c.api.Issues.CreateComment(ctx, s.c.owner, s.c.repo, s.number, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return 0, "", apiError("create pull request comment", err)
	}
	return cm.GetID(), cm.GetHTMLURL(), nil
}

func (s *issueComments) edit(ctx context.Context, id int64, body string) (string, error) {
	cm, _, err := s.c.api.Issues.EditComment(ctx, s.c.owner, s.c.repo, id, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return "", apiError("edit pull request comment", err)
	}
	return cm.GetHTMLURL(), nil
}

type commitComments struct {
	c   *Client
	sha string
}

func (s *commitComments) list(ctx context.Context, page int) ([]storedComment, int, error) {
	cs, resp, err := s.c.api.Repositories.ListCommitComments(ctx, s.c.owner, s.c.repo, s.sha, &gh.ListOptions{Page: page, PerPage: perPage})
	if err != nil {
		return nil, 0, apiError("list commit comments", err)
	}
	out := make([]storedComment, len(cs))
	for i, cm := range cs {
		out[i] = storedComment{id: cm.GetID(), body: cm.GetBody()}
	}
	return out, resp.NextPage, nil
}

func (s *commitComments) create(ctx context.Context, body string) (int64, string, error) {
	cm, _, err := s.c.api.Repositories.CreateComment(ctx, s.c.owner, s.c.repo, s.sha, &gh.RepositoryComment{Body: gh.String(body)})
	if err != nil {
		return 0, "", apiError("create commit comment", err)
	}
	return cm.GetID(), cm.GetHTMLURL(), nil
}

func (s *commitComments) edit(ctx context.Context, id int64, body string) (string, error) {
	cm, _, err := s.c.api.Repositories.UpdateComment(ctx, s.c.owner, s.c.repo, id, &gh.RepositoryComment{Body: gh.String(body)})
	if err != nil {
		return "", apiError("edit commit comment", err)
	}
	return cm.GetHTMLURL(), nil
}
