package github

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeGitHub is just enough of the REST API for this package: pull-request
// and commit comments with Link-header pagination, and check runs. It
// records every write so tests can assert on requests, not on our own code.
type fakeGitHub struct {
	t        *testing.T
	pageSize int  // comments per page the server returns, whatever per_page asks
	denyAll  bool // answer writes with 403, as for a fork's read-only token
	// pullHeads are the head commits GET /pulls/{n} knows; other numbers
	// get a 404.
	pullHeads map[int]string

	mu        sync.Mutex
	comments  []fakeComment
	nextID    int64
	creates   int
	edits     []int64
	listPages []int
	checkReqs []checkRequest
	requests  []string // "METHOD /path" of every request, in order
	server    *httptest.Server
}

type fakeComment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	URL  string `json:"html_url"`
}

type checkRequest struct {
	Method      string
	HeadSHA     string
	Status      string
	Conclusion  string
	Annotations int
	Title       string
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{t: t, pageSize: 30, nextID: 1000}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/o/r/issues/{n}/comments", f.listComments)
	mux.HandleFunc("GET /repos/o/r/commits/{sha}/comments", f.listComments)
	mux.HandleFunc("POST /repos/o/r/issues/{n}/comments", f.createComment)
	mux.HandleFunc("POST /repos/o/r/commits/{sha}/comments", f.createComment)
	mux.HandleFunc("PATCH /repos/o/r/issues/comments/{id}", f.editComment)
	mux.HandleFunc("PATCH /repos/o/r/comments/{id}", f.editComment)
	mux.HandleFunc("GET /repos/o/r/pulls/{n}", f.getPull)
	mux.HandleFunc("POST /repos/o/r/check-runs", f.checkRun)
	mux.HandleFunc("PATCH /repos/o/r/check-runs/{id}", f.checkRun)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	})
	f.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.server.Close)
	return f
}

func (f *fakeGitHub) env() Env {
	return Env{APIURL: f.server.URL, Repository: "o/r", Workflow: "CI", Job: "engines", SHA: "abc123"}
}

func (f *fakeGitHub) client() *client {
	c, err := newClient("secret", f.env(), f.server.Client())
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// seed adds n unrelated comments, as other bots and people leave them.
func (f *fakeGitHub) seed(n int) {
	for i := range n {
		f.add(fmt.Sprintf("comment %d", i))
	}
}

func (f *fakeGitHub) add(body string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.comments = append(f.comments, fakeComment{ID: f.nextID, Body: body, URL: fmt.Sprintf("https://github.test/c/%d", f.nextID)})
	return f.nextID
}

func (f *fakeGitHub) listComments(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer secret" {
		f.t.Errorf("list without the token: %q", r.Header.Get("Authorization"))
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listPages = append(f.listPages, page)
	lastPage := max(1, (len(f.comments)+f.pageSize-1)/f.pageSize)
	from := min((page-1)*f.pageSize, len(f.comments))
	to := min(page*f.pageSize, len(f.comments))
	link := func(p int, rel string) string {
		u := *r.URL
		q := u.Query()
		q.Set("page", strconv.Itoa(p))
		u.RawQuery = q.Encode()
		return fmt.Sprintf(`<%s%s>; rel="%s"`, f.server.URL, u.RequestURI(), rel)
	}
	var links []string
	if page < lastPage {
		links = append(links, link(page+1, "next"), link(lastPage, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	writeJSON(w, http.StatusOK, f.comments[from:to])
}

func (f *fakeGitHub) createComment(w http.ResponseWriter, r *http.Request) {
	if f.deny(w) {
		return
	}
	var in fakeComment
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		f.t.Error(err)
	}
	f.add(in.Body)
	f.mu.Lock()
	f.creates++
	c := f.comments[len(f.comments)-1]
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, c)
}

func (f *fakeGitHub) editComment(w http.ResponseWriter, r *http.Request) {
	if f.deny(w) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in fakeComment
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		f.t.Error(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.edits = append(f.edits, id)
	for i := range f.comments {
		if f.comments[i].ID == id {
			f.comments[i].Body = in.Body
			writeJSON(w, http.StatusOK, f.comments[i])
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func (f *fakeGitHub) checkRun(w http.ResponseWriter, r *http.Request) {
	if f.deny(w) {
		return
	}
	var in struct {
		HeadSHA    string `json:"head_sha"`
		Status     string `json:"status"`
		Conclusion string `json:"conclusion"`
		Output     struct {
			Title       string            `json:"title"`
			Summary     string            `json:"summary"`
			Annotations []json.RawMessage `json:"annotations"`
		} `json:"output"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		f.t.Error(err)
	}
	if in.Output.Title == "" || in.Output.Summary == "" {
		f.t.Errorf("%s check run without output title/summary", r.Method)
	}
	if r.Method == http.MethodPost && in.HeadSHA == "" {
		f.t.Error("check run without head_sha")
	}
	if r.Method == http.MethodPatch && r.PathValue("id") != "77" {
		f.t.Errorf("update of check run %s, want 77", r.PathValue("id"))
	}
	f.mu.Lock()
	f.checkReqs = append(f.checkReqs, checkRequest{Method: r.Method, HeadSHA: in.HeadSHA, Status: in.Status, Conclusion: in.Conclusion,
		Annotations: len(in.Output.Annotations), Title: in.Output.Title})
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": 77})
}

func (f *fakeGitHub) getPull(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	f.mu.Lock()
	sha, ok := f.pullHeads[n]
	f.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"number": n, "head": map[string]string{"sha": sha}})
}

func (f *fakeGitHub) deny(w http.ResponseWriter) bool {
	if f.denyAll {
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
	}
	return f.denyAll
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
