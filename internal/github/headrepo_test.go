package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Which runs execute code from another repository than the workflow's:
// the event files are as GitHub writes them (the fields read, and others
// beside them).
func TestForeignHead(t *testing.T) {
	dir := t.TempDir()
	event := func(name, body string) string {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fork := event("fork", `{"action":"opened","number":7,"pull_request":{"number":7,"head":{"ref":"main","sha":"abc","repo":{"full_name":"octocat/engines","fork":true}},"base":{"repo":{"full_name":"acme/engines"}}}}`)
	same := event("same", `{"pull_request":{"number":8,"head":{"repo":{"full_name":"ACME/Engines"}}}}`)
	deleted := event("deleted", `{"pull_request":{"number":9,"head":{"repo":null}}}`)
	runFromFork := event("run", `{"workflow_run":{"head_sha":"abc","head_repository":{"full_name":"octocat/engines"}}}`)
	push := event("push", `{"ref":"refs/heads/main","repository":{"full_name":"acme/engines"}}`)
	broken := event("broken", `{"pull_request":`)
	for _, c := range []struct {
		event, path string
		want        string // "" for a run of the repository's own code
	}{
		{"pull_request", fork, "this pull_request run's code comes from octocat/engines, not acme/engines"},
		{"pull_request_target", fork, "this pull_request_target run's code comes from octocat/engines, not acme/engines"},
		// A review or a review comment on a fork's pull request runs its merge commit, as pull_request does.
		{"pull_request_review", fork, "this pull_request_review run's code comes from octocat/engines, not acme/engines"},
		{"pull_request_review_comment", fork, "this pull_request_review_comment run's code comes from octocat/engines"},
		{"pull_request_review", same, ""},
		{"pull_request", same, ""}, // a branch of the repository itself, names compared without case
		{"pull_request", deleted, "names no head repository"},
		{"workflow_run", runFromFork, "this workflow_run run's code comes from octocat/engines"},
		{"push", push, ""},
		{"push", "", ""}, // no event file needed where no pull request can bring code
		{"pull_request", "", "has no event file"},
		{"pull_request", filepath.Join(dir, "missing.json"), "event file cannot be read"},
		{"pull_request_target", broken, "event file is not JSON"},
	} {
		got := ForeignHead(Env{EventName: c.event, EventPath: c.path, Repository: "acme/engines"})
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s %s: %q, want %q", c.event, filepath.Base(c.path), got, c.want)
		}
	}
}
