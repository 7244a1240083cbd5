package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/report"
)

func runReport(durations map[string]int64) *report.Report {
	r := &report.Report{Version: report.SchemaVersion, Matrix: "trt-builds.yml", Complete: true}
	for _, name := range []string{"resnet", "bert", "yolo"} {
		if d, ok := durations[name]; ok {
			r.Builds = append(r.Builds, report.Build{Name: name, Backend: "sim", Status: report.StatusOK, DurationMs: d})
		}
	}
	return r
}

func summaryStub(r *report.Report, _ int) string {
	return fmt.Sprintf("## trt-action\n\n%d builds\n", len(r.Builds))
}

func writeEvent(t *testing.T, payload string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(p, []byte(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func publishPR(t *testing.T, f *fakeGitHub, r *report.Report) Outcome {
	t.Helper()
	env := f.env()
	env.EventPath = writeEvent(t, `{"pull_request":{"number":7,"head":{"sha":"headsha"}}}`)
	out, err := Publish(context.Background(), env, Options{Token: "secret", Comment: CommentPullRequest,
		Summary: summaryStub, HTTPClient: f.server.Client()}, r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFirstRunCreatesSecondRunEditsSameComment(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed(3)

	out := publishPR(t, f, runReport(map[string]int64{"resnet": 100e3, "bert": 50e3, "yolo": 20e3}))
	if f.creates != 1 || len(f.edits) != 0 || !out.Commented || out.CommentURL == "" {
		t.Fatalf("first run: creates=%d edits=%v outcome=%+v", f.creates, f.edits, out)
	}
	created := f.comments[len(f.comments)-1]
	if !strings.HasPrefix(created.Body, Marker("CI", "engines", "")+"\n") || !strings.Contains(created.Body, "3 builds") {
		t.Errorf("first body:\n%s", created.Body)
	}
	if strings.Contains(created.Body, "Compared with the previous run") {
		t.Error("a first comment has nothing to compare with")
	}

	// Second run: resnet 20% slower, bert 10% faster, yolo within 5%.
	publishPR(t, f, runReport(map[string]int64{"resnet": 120e3, "bert": 45e3, "yolo": 20.5e3}))
	if f.creates != 1 || len(f.edits) != 1 || f.edits[0] != created.ID {
		t.Fatalf("second run: creates=%d edits=%v, want one edit of %d", f.creates, f.edits, created.ID)
	}
	if len(f.comments) != 4 {
		t.Errorf("comment count = %d, want 4 (no duplicate)", len(f.comments))
	}
	body := f.comments[3].Body
	for _, want := range []string{"Compared with the previous run", "**Slower**", "| resnet | 1m40s | 2m0s | +20.0% |",
		"**Faster**", "| bert | 50s | 45s | -10.0% |"} {
		if !strings.Contains(body, want) {
			t.Errorf("second body lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "| yolo |") {
		t.Errorf("yolo moved 2.5%%, below the threshold:\n%s", body)
	}
}

func TestMarkerFoundOnLastOfThreePages(t *testing.T) {
	f := newFakeGitHub(t)
	f.pageSize = 2
	f.seed(4)
	id := f.add(Marker("CI", "engines", "") + "\nold body")
	if len(f.comments) != 5 {
		t.Fatal("setup")
	}
	publishPR(t, f, runReport(map[string]int64{"resnet": 1000}))
	if fmt.Sprint(f.listPages) != "[1 2 3]" {
		t.Errorf("pages read = %v, want [1 2 3]", f.listPages)
	}
	if f.creates != 0 || len(f.edits) != 1 || f.edits[0] != id {
		t.Errorf("creates=%d edits=%v, want one edit of %d", f.creates, f.edits, id)
	}
}

func TestOtherJobsCommentIsLeftAlone(t *testing.T) {
	f := newFakeGitHub(t)
	f.add(Marker("CI", "other-job", "") + "\nnot ours")
	publishPR(t, f, runReport(map[string]int64{"resnet": 1000}))
	if f.creates != 1 || len(f.edits) != 0 {
		t.Errorf("creates=%d edits=%v: another job's comment must not be edited", f.creates, f.edits)
	}
}

func TestForbiddenCommentIsANotice(t *testing.T) {
	f := newFakeGitHub(t)
	f.denyAll = true
	env := f.env()
	env.EventPath = writeEvent(t, `{"pull_request":{"number":7,"head":{"sha":"h"}}}`)
	out, err := Publish(context.Background(), env, Options{Token: "secret", Comment: CommentPullRequest, CheckRun: true,
		HTTPClient: f.server.Client()}, runReport(map[string]int64{"resnet": 1000}))
	if err != nil {
		t.Fatalf("a refused write must not be an error: %v", err)
	}
	if out.Commented || len(out.Notices) != 2 {
		t.Fatalf("outcome = %+v, want two notices", out)
	}
	if !strings.Contains(out.Notices[0], "pull request #7") || !strings.Contains(out.Notices[0], "forks") {
		t.Errorf("comment notice = %q", out.Notices[0])
	}
	if !strings.Contains(out.Notices[1], "checks: write") {
		t.Errorf("check-run notice = %q", out.Notices[1])
	}

	_, err = f.client().stickyComment(context.Background(), target{PullRequest: 7}, "m", func(string) string { return "m" })
	var perr *permissionError
	if !errors.Is(err, errNoPermission) || !errors.As(err, &perr) || perr.Status != 403 || perr.Op != "create pull request comment" {
		t.Errorf("StickyComment err = %#v", err)
	}
}

func TestCommentModes(t *testing.T) {
	f := newFakeGitHub(t)
	env := f.env()
	env.EventPath = writeEvent(t, `{"ref":"refs/heads/main"}`) // a push: no pull request
	r := runReport(map[string]int64{"resnet": 1000})
	publish := func(mode string) Outcome {
		out, err := Publish(context.Background(), env, Options{Token: "secret", Comment: mode, HTTPClient: f.server.Client()}, r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := publish(CommentPullRequest); out.Commented || f.creates != 0 {
		t.Errorf("pull-request mode on a push commented: %+v", out)
	}
	if _, err := Publish(context.Background(), env, Options{Comment: CommentPullRequest}, r); err != nil {
		t.Errorf("nothing to publish should not need a token: %v", err)
	}
	if out := publish(CommentAlways); !out.Commented || f.creates != 1 {
		t.Errorf("always mode on a push should comment on the commit: %+v", out)
	}
	if out := publish(CommentAlways); f.creates != 1 || len(f.edits) != 1 {
		t.Errorf("second always run should edit the commit comment: %+v creates=%d", out, f.creates)
	}
	if _, err := Publish(context.Background(), env, Options{Comment: "sometimes"}, r); err == nil {
		t.Error("unknown mode accepted")
	}
	if out, err := Publish(context.Background(), env, Options{Comment: CommentOff}, r); err != nil || out.Commented {
		t.Errorf("off: %+v %v", out, err)
	}
}

func failingReport(n int) *report.Report {
	r := &report.Report{Matrix: "trt-builds.yml", Complete: true}
	for i := range n {
		r.Builds = append(r.Builds, report.Build{Name: fmt.Sprintf("b%03d", i), Status: report.StatusFailed, Reason: "parser failed"})
	}
	r.Builds = append(r.Builds, report.Build{Name: "fine", Status: report.StatusOK})
	return r
}

func TestCheckRunAnnotationsBatched(t *testing.T) {
	f := newFakeGitHub(t)
	id, err := f.client().publishCheckRun(context.Background(), failingReport(120), checkRunOptions{HeadSHA: "abc"})
	if err != nil || id != 77 {
		t.Fatalf("id=%d err=%v", id, err)
	}
	want := []checkRequest{
		{Method: "POST", HeadSHA: "abc", Status: "in_progress", Annotations: 50, Title: "1 of 121 builds succeeded"},
		{Method: "PATCH", Annotations: 50, Title: "1 of 121 builds succeeded"},
		{Method: "PATCH", Status: "completed", Conclusion: "failure", Annotations: 20, Title: "1 of 121 builds succeeded"},
	}
	if fmt.Sprint(f.checkReqs) != fmt.Sprint(want) {
		t.Errorf("requests:\n got %+v\nwant %+v", f.checkReqs, want)
	}
}

func TestCheckRunFewAnnotationsIsOneRequest(t *testing.T) {
	f := newFakeGitHub(t)
	if _, err := f.client().publishCheckRun(context.Background(), failingReport(0), checkRunOptions{HeadSHA: "abc"}); err != nil {
		t.Fatal(err)
	}
	if len(f.checkReqs) != 1 || f.checkReqs[0].Status != "completed" || f.checkReqs[0].Conclusion != "success" || f.checkReqs[0].Annotations != 0 {
		t.Errorf("requests = %+v", f.checkReqs)
	}
}

func TestAnnotations(t *testing.T) {
	r := &report.Report{Matrix: "m.yml", Builds: []report.Build{
		{Name: "a", Status: report.StatusOK},
		{Name: "b", Status: report.StatusBudgetExceeded, Reason: "build budget of 30s ran out"},
		{Name: "c", Status: report.StatusCancelled},
	}}
	as := annotations(r, func(name string) (string, int) { return "trt-builds.yml", map[string]int{"b": 12, "c": 20}[name] })
	if len(as) != 2 {
		t.Fatalf("got %d annotations", len(as))
	}
	if as[0].GetAnnotationLevel() != "failure" || as[0].GetStartLine() != 12 || as[0].GetMessage() != "build budget of 30s ran out" || as[0].GetTitle() != "b: budget-exceeded" {
		t.Errorf("budget annotation = %v", as[0])
	}
	if as[1].GetAnnotationLevel() != "warning" || as[1].GetMessage() != "build cancelled" {
		t.Errorf("cancelled annotation = %v", as[1])
	}
	if got := annotations(r, nil)[0]; got.GetPath() != "m.yml" || got.GetStartLine() != 1 {
		t.Errorf("default location = %s:%d", got.GetPath(), got.GetStartLine())
	}
}

func TestConclusion(t *testing.T) {
	cases := []struct {
		statuses []string
		complete bool
		want     string
	}{
		{[]string{report.StatusOK}, true, "success"},
		{[]string{report.StatusOK, report.StatusKilled}, true, "failure"},
		{[]string{report.StatusOK, report.StatusCancelled}, false, "cancelled"},
		{[]string{report.StatusOK}, false, "cancelled"},
	}
	for _, c := range cases {
		r := &report.Report{Complete: c.complete}
		for _, s := range c.statuses {
			r.Builds = append(r.Builds, report.Build{Status: s})
		}
		if got := conclusionOf(r); got != c.want {
			t.Errorf("conclusion(%v, complete=%v) = %s, want %s", c.statuses, c.complete, got, c.want)
		}
	}
}

func TestParseEvent(t *testing.T) {
	cases := map[string]workflowEvent{
		`{"number":3,"pull_request":{"number":3,"head":{"sha":"h1"}}}`:                   {PullRequest: 3, HeadSHA: "h1"},
		`{"issue":{"number":9,"pull_request":{"url":"x"}},"comment":{"id":1}}`:           {PullRequest: 9},
		`{"issue":{"number":9},"comment":{"id":1}}`:                                      {},
		`{"ref":"refs/heads/main"}`:                                                      {},
		`{"workflow_run":{"head_sha":"w1","pull_requests":[{"number":4},{"number":6}]}}`: {PullRequest: 4, HeadSHA: "w1"},
		`{"workflow_run":{"head_sha":"w2","pull_requests":[]}}`:                          {HeadSHA: "w2"},
	}
	for payload, want := range cases {
		got, err := parseEvent([]byte(payload))
		if err != nil || got != want {
			t.Errorf("parseEvent(%s) = %+v, %v; want %+v", payload, got, err, want)
		}
	}
	if _, err := parseEvent([]byte("{")); err == nil {
		t.Error("broken JSON accepted")
	}
	if ev, err := readEvent(""); err != nil || ev != (workflowEvent{}) {
		t.Errorf("no event file: %+v %v", ev, err)
	}
}

func TestNewClient(t *testing.T) {
	ghes := Env{APIURL: "https://ghe.example.com/api/v3", Repository: "o/r"}
	c, err := newClient("t", ghes, nil)
	if err != nil || c.api.BaseURL.String() != "https://ghe.example.com/api/v3/" {
		t.Errorf("GHES base = %v, %v", c, err)
	}
	c, err = newClient("t", Env{Repository: "o/r"}, nil)
	if err != nil || c.api.BaseURL.String() != "https://api.github.com/" {
		t.Errorf("default base = %v, %v", c, err)
	}
	for _, env := range []Env{{Repository: "noslash"}, {Repository: "a/b/c"}, {Repository: "o/r", APIURL: "not a url"}} {
		if _, err := newClient("t", env, nil); err == nil {
			t.Errorf("newClient(%+v) accepted", env)
		}
	}
	if _, err := newClient("", Env{Repository: "o/r"}, nil); err == nil {
		t.Error("empty token accepted")
	}
}

func TestMarkerCannotEndTheHTMLComment(t *testing.T) {
	m := Marker("build --> <b>x</b>", "job:1", "a\n-->b")
	if strings.Count(m, "-->") != 1 || strings.Contains(m, "<b>") || strings.Contains(m, "\n") || !strings.HasSuffix(m, " -->") {
		t.Errorf("Marker = %q", m)
	}
}

func TestMarkersOfDifferentJobsDiffer(t *testing.T) {
	// Pairs whose readable parts are the same once sanitised: only the hash
	// tells them apart.
	pairs := [][2][3]string{
		{{"构建", "job", ""}, {"测试", "job", ""}},
		{{"CI:GPU", "job", ""}, {"CI-GPU", "job", ""}},
		{{"CI", "a:b", ""}, {"CI:a", "b", ""}}, // a ':' in a name is no separator
		{{"CI", "job", ""}, {"CI", "job", "a100"}},
		{{"CI", "job", "gpu 0"}, {"CI", "job", "gpu_0"}},
		{{strings.Repeat("w", 100) + "1", "job", ""}, {strings.Repeat("w", 100) + "2", "job", ""}},
	}
	for _, p := range pairs {
		a, b := Marker(p[0][0], p[0][1], p[0][2]), Marker(p[1][0], p[1][1], p[1][2])
		if a == b || strings.HasPrefix(a, b) || strings.HasPrefix(b, a) {
			t.Errorf("%q and %q share marker %q", p[0], p[1], a)
		}
	}
	// The marker is a pure function of the raw names: recompute its hash.
	sum := sha256.Sum256([]byte("CI\x00engines\x00a100"))
	if m, want := Marker("CI", "engines", "a100"), hex.EncodeToString(sum[:])[:12]; !strings.Contains(m, " "+want+" ") {
		t.Errorf("marker %q lacks the hash %s of its raw names", m, want)
	}
	if m := Marker("CI", "engines", "a100"); !strings.HasPrefix(m, "<!-- trt-action:CI:engines:a100 ") {
		t.Errorf("readable part lost: %q", m)
	}
}

func TestCommentKeySeparatesMatrixLegs(t *testing.T) {
	f := newFakeGitHub(t)
	env := f.env()
	env.EventPath = writeEvent(t, `{"pull_request":{"number":7,"head":{"sha":"h"}}}`)
	publishLeg := func(key string, d int64) {
		t.Helper()
		_, err := Publish(context.Background(), env, Options{Token: "secret", Comment: CommentPullRequest, CommentKey: key,
			HTTPClient: f.server.Client()}, runReport(map[string]int64{"resnet": d}))
		if err != nil {
			t.Fatal(err)
		}
	}
	publishLeg("a100", 1000)
	publishLeg("h100", 2000)
	if f.creates != 2 || len(f.edits) != 0 {
		t.Fatalf("two legs: creates=%d edits=%v, want two comments", f.creates, f.edits)
	}
	publishLeg("a100", 3000)
	if f.creates != 2 || len(f.edits) != 1 || f.edits[0] != f.comments[0].ID {
		t.Errorf("a100 again: creates=%d edits=%v, want an edit of %d", f.creates, f.edits, f.comments[0].ID)
	}
}

func TestCommentQuotingTheMarkerIsNotTakenOver(t *testing.T) {
	f := newFakeGitHub(t)
	f.add("Why does the bot write " + Marker("CI", "engines", "") + "?")
	publishPR(t, f, runReport(map[string]int64{"resnet": 1000}))
	if f.creates != 1 || len(f.edits) != 0 {
		t.Errorf("creates=%d edits=%v: a person's comment was edited", f.creates, f.edits)
	}
}

func TestOldMarkerFormatIsNotMatched(t *testing.T) {
	f := newFakeGitHub(t)
	f.add("<!-- trt-action:CI:engines -->\nbefore the hash")
	publishPR(t, f, runReport(map[string]int64{"resnet": 1000}))
	if f.creates != 1 || len(f.edits) != 0 {
		t.Errorf("creates=%d edits=%v", f.creates, f.edits)
	}
}

func TestCheckRunHeadCommit(t *testing.T) {
	cases := []struct {
		name, payload string
		pulls         map[int]string
		wantSHA       string
		wantNotice    bool
	}{
		{"pull_request", `{"pull_request":{"number":7,"head":{"sha":"prhead"}}}`, nil, "prhead", false},
		{"issue_comment looked up", `{"issue":{"number":7,"pull_request":{"url":"x"}},"comment":{"id":1}}`, map[int]string{7: "looked-up"}, "looked-up", false},
		{"issue_comment lookup fails", `{"issue":{"number":8,"pull_request":{"url":"x"}},"comment":{"id":1}}`, nil, "abc123", true},
		{"workflow_run", `{"workflow_run":{"head_sha":"runhead","pull_requests":[{"number":7}]}}`, nil, "runhead", false},
		{"push", `{"ref":"refs/heads/main"}`, nil, "abc123", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeGitHub(t)
			f.pullHeads = c.pulls
			env := f.env()
			env.EventPath = writeEvent(t, c.payload)
			out, err := Publish(context.Background(), env, Options{Token: "secret", Comment: CommentOff, CheckRun: true,
				HTTPClient: f.server.Client()}, runReport(map[string]int64{"resnet": 1000}))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.checkReqs) != 1 || f.checkReqs[0].HeadSHA != c.wantSHA {
				t.Fatalf("check runs = %+v, want one on %s", f.checkReqs, c.wantSHA)
			}
			if got := len(out.Notices) == 1 && strings.Contains(out.Notices[0], "GITHUB_SHA abc123"); got != c.wantNotice {
				t.Errorf("notices = %q, want a fallback notice: %v", out.Notices, c.wantNotice)
			}
			if !c.wantNotice && len(out.Notices) != 0 {
				t.Errorf("unexpected notices %q", out.Notices)
			}
		})
	}
}

func TestWorkflowRunCommentsOnItsPullRequestOrCommit(t *testing.T) {
	cases := []struct{ payload, mode, want string }{
		{`{"workflow_run":{"head_sha":"runhead","pull_requests":[{"number":5}]}}`, CommentPullRequest,
			"[GET /repos/o/r/issues/5/comments POST /repos/o/r/issues/5/comments]"},
		{`{"workflow_run":{"head_sha":"runhead","pull_requests":[]}}`, CommentAlways,
			"[GET /repos/o/r/commits/runhead/comments POST /repos/o/r/commits/runhead/comments]"},
	}
	for _, c := range cases {
		f := newFakeGitHub(t)
		env := f.env()
		env.EventPath = writeEvent(t, c.payload)
		if _, err := Publish(context.Background(), env, Options{Token: "secret", Comment: c.mode, HTTPClient: f.server.Client()},
			runReport(map[string]int64{"resnet": 1000})); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(f.requests) != c.want {
			t.Errorf("%s: requests:\n got %v\nwant %s", c.payload, f.requests, c.want)
		}
	}
}
