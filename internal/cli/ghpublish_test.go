package cli

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/trt-action/trt-action/internal/github"
	"github.com/trt-action/trt-action/internal/report"
)

// TestCommentKeyInputReachesTheMarker runs publish as the action does, with
// the comment-key input in the environment, against a fake API that has no
// comments yet, and checks the marker of the comment it creates.
func TestCommentKeyInputReachesTheMarker(t *testing.T) {
	var mu sync.Mutex
	var created []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/repos/o/r/issues/7/comments":
			io.WriteString(w, "[]")
		case r.Method == http.MethodPost && r.URL.Path == "/repos/o/r/issues/7/comments":
			var in struct{ Body string }
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				t.Error(err)
			}
			mu.Lock()
			created = append(created, in.Body)
			mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":1,"html_url":"https://github.test/c/1"}`)
		default:
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	event := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(event, []byte(`{"pull_request":{"number":7,"head":{"sha":"h"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, errb := fanoutCommand(map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_API_URL": api.URL, "GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_PATH": event,
		"GITHUB_WORKFLOW": "CI", "GITHUB_JOB": "engines", "GITHUB_TOKEN": "secret",
		"INPUT_COMMENT": "pull-request", "INPUT_COMMENT-KEY": "a100",
	})
	var p publishFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	p.register(fs)
	if err := c.parse(fs, nil, publishInputs); err != nil {
		t.Fatal(err)
	}
	r := &report.Report{Builds: []report.Build{{Name: "resnet", Backend: "sim", Status: report.StatusOK, DurationMs: 1000}}}
	c.publish(p, r, "", nil, nil)
	mu.Lock()
	defer mu.Unlock()
	if len(created) != 1 || !strings.HasPrefix(created[0], github.Marker("CI", "engines", "a100")+"\n") {
		t.Fatalf("created %q; log: %s", created, errb)
	}
}

func TestCommentSummaryPutsTheComparisonAfterTheTableWithinTheRoom(t *testing.T) {
	r := &report.Report{Complete: true, Builds: []report.Build{{Name: "resnet", Backend: "sim", Status: report.StatusFailed, Reason: "parser error"}}}
	got := commentSummary(func(*report.Report) string { return "### Build times against the baseline\n" })(r, 2000)
	table, comparison, problem := strings.Index(got, "| resnet |"), strings.Index(got, "### Build times"), strings.Index(got, "### resnet")
	if table < 0 || comparison < table || problem < comparison {
		t.Errorf("want the table, then the comparison, then the failed build's section:\n%s", got)
	}
	if len(got) > 2000 {
		t.Errorf("%d bytes in a room of 2000", len(got))
	}
}

// A notice quotes GitHub's error text, which can quote names from input: it
// reaches the summary escaped, with no live mention or HTML.
func TestSummaryNotesAreEscaped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.md")
	if err := appendSummaryNotes(path, []string{"could not comment: 422 @octocat <b>x</b> | y\nz"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, bad := range []string{"@octocat", "<b>", " | y", "\nz"} {
		if strings.Contains(got, bad) {
			t.Errorf("summary note holds %q unescaped:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "> [!NOTE]\n> could not comment: 422 ") {
		t.Errorf("summary note lost its text:\n%s", got)
	}
}

// Issue 18 point 5: notes went to the summary with O_APPEND, in place; now
// through atomicfile, so another name of the file keeps what it had.
func TestSummaryNotesReplaceTheSummaryWhole(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "summary.md"), filepath.Join(dir, "kept.md")
	if err := os.WriteFile(path, []byte("# Summary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, other); err != nil {
		t.Fatal(err)
	}
	if err := appendSummaryNotes(path, []string{"no permission to comment"}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(other); string(data) != "# Summary\n" {
		t.Errorf("the summary was written in place: its other name holds %q", data)
	}
	if data, _ := os.ReadFile(path); !strings.HasPrefix(string(data), "# Summary\n\n> [!NOTE]\n> no permission to comment") {
		t.Errorf("summary %q, want the old summary and the note", data)
	}
}
