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
	"github.com/trt-action/trt-action/internal/outputs"
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
	c.publish(p, r, outputs.New(c.actions(), outputs.Paths{Report: filepath.Join(t.TempDir(), "r.json")}), nil)
	mu.Lock()
	defer mu.Unlock()
	if len(created) != 1 || !strings.HasPrefix(created[0], github.Marker("CI", "engines", "a100")+"\n") {
		t.Fatalf("created %q; log: %s", created, errb)
	}
}
