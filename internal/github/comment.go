package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// Marker is the hidden first line that identifies the comment of one
// workflow's job (and, for matrix legs, which share GITHUB_JOB, one comment
// key), so each keeps exactly one comment. It has a readable part, with
// every character that could end the HTML comment or break the line
// replaced, and the first 12 hex digits of the SHA-256 of the raw names:
// the readable part alone is lossy ("CI:GPU" and "CI-GPU", or two names in
// another script, read the same), the hash keeps markers of different jobs
// apart.
//
// Comments written before the hash was added ("<!-- trt-action:W:J -->")
// no longer match and are left behind on pull requests that had them; one
// new comment replaces them, and no run ever edits another job's comment.
func Marker(workflow, job, key string) string {
	readable := markerSafe(workflow) + ":" + markerSafe(job)
	if key != "" {
		readable += ":" + markerSafe(key)
	}
	sum := sha256.Sum256([]byte(workflow + "\x00" + job + "\x00" + key))
	return "<!-- trt-action:" + readable + " " + hex.EncodeToString(sum[:])[:markerHashDigits] + " -->"
}

// markerHashDigits is 48 bits of hash: collisions between the few jobs
// commenting on one pull request are out of reach.
const markerHashDigits = 12

// markerReadableRunes keeps the marker line short for long workflow names;
// the hash still tells them apart.
const markerReadableRunes = 64

// markerSafe keeps letters, digits and " ._/()-" and replaces the rest with
// '_'. Without '<', '>' and '!' no sequence can end the comment early.
func markerSafe(s string) string {
	var sb strings.Builder
	n := 0
	for _, r := range s {
		if n == markerReadableRunes {
			break
		}
		n++
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		case strings.ContainsRune(" ._/()-", r):
			sb.WriteRune(r)
		default:
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

// target is where a comment goes: a pull request when PullRequest is set,
// otherwise the commit Commit.
type target struct {
	PullRequest int
	Commit      string
}

// commentResult says what StickyComment did.
type commentResult struct {
	ID      int64
	URL     string
	Created bool // false: an existing comment was edited
}

// stickyComment finds the comment holding marker on target, searching every
// page, and replaces its body with render(previous body); without one, it
// creates a comment with render(""). The body must contain marker for the
// next run to find it. Refused writes return a *permissionError.
func (c *client) stickyComment(ctx context.Context, target target, marker string, render func(previous string) string) (commentResult, error) {
	store := c.commentStore(target)
	found, err := findMarked(ctx, store, marker)
	if err != nil {
		return commentResult{}, err
	}
	if found == nil {
		id, url, err := store.create(ctx, render(""))
		return commentResult{ID: id, URL: url, Created: true}, err
	}
	url, err := store.edit(ctx, found.id, render(found.body))
	return commentResult{ID: found.id, URL: url}, err
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

// isMarked says whether body is the comment marker names. The marker must
// open the body, as commentBody writes it: a person's comment that quotes
// or mentions the marker is never taken over.
func isMarked(body, marker string) bool {
	return strings.HasPrefix(strings.TrimLeft(body, " \t\r\n"), marker)
}

// findMarked walks pages until the marker turns up; go-github paginates
// only when asked, so following NextPage is on us.
func findMarked(ctx context.Context, store commentStore, marker string) (*storedComment, error) {
	for page := 1; page != 0; {
		comments, next, err := store.list(ctx, page)
		if err != nil {
			return nil, err
		}
		for _, cm := range comments {
			if isMarked(cm.body, marker) {
				return &cm, nil
			}
		}
		page = next
	}
	return nil, nil
}

func (c *client) commentStore(t target) commentStore {
	if t.PullRequest != 0 {
		return &issueComments{c: c, number: t.PullRequest}
	}
	return &commitComments{c: c, sha: t.Commit}
}

type issueComments struct {
	c      *client
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
	c   *client
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
