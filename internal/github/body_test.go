package github

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trt-action/trt-action/internal/report"
)

func TestCommentBodyIsCappedAndKeepsItsData(t *testing.T) {
	r := &report.Report{}
	for i := range 300 {
		r.Builds = append(r.Builds, report.Build{Name: fmt.Sprintf("b%d", i), Status: report.StatusOK, DurationMs: int64(i + 1)})
	}
	huge := func(*report.Report) string { return strings.Repeat("| row with ünïcödé text |\n", 5000) }
	body := CommentBody("<!-- m -->", r, huge, "")
	if len(body) > MaxCommentChars {
		t.Fatalf("body is %d bytes", len(body))
	}
	if !utf8.ValidString(body) {
		t.Error("cut inside a character")
	}
	if !strings.HasPrefix(body, "<!-- m -->\n") || !strings.Contains(body, "shortened to fit") {
		t.Errorf("marker or note missing: %q...%q", body[:40], body[len(body)-300:])
	}
	prev, ok := previousDurations(body)
	if !ok || len(prev) != 300 || prev["b299"] != 300 {
		t.Errorf("data did not survive shortening: ok=%v len=%d", ok, len(prev))
	}
	if kept := strings.SplitN(body, shortenedNote, 2)[0]; !strings.HasSuffix(kept, "| row with ünïcödé text |\n") {
		t.Errorf("table was cut mid-line: %q", kept[len(kept)-40:])
	}
}

func TestCommentBodyDropsDataOnlyWhenItCannotFit(t *testing.T) {
	r := &report.Report{}
	for i := range 4000 { // about 100 KB of data: more than the whole comment
		r.Builds = append(r.Builds, report.Build{Name: fmt.Sprintf("a-rather-long-build-name-%05d", i), Status: report.StatusOK, DurationMs: 1})
	}
	body := CommentBody("<!-- m -->", r, func(*report.Report) string { return "table\n" }, "")
	if len(body) > MaxCommentChars || !strings.Contains(body, "table") {
		t.Fatalf("len %d", len(body))
	}
	if _, ok := previousDurations(body); ok {
		t.Error("oversized data should have been dropped, not cut into invalid JSON")
	}
}

func TestCommentBodyNamesAreEscaped(t *testing.T) {
	r := &report.Report{Builds: []report.Build{{Name: "x | <img src=y> `z`", Status: report.StatusOK, DurationMs: 2000}}}
	prev := dataPrefix + `{"x | \u003cimg src=y\u003e ` + "`z`" + `":1000} -->`
	body := CommentBody("<!-- m -->", r, nil, prev)
	if strings.Contains(body, "<img") || strings.Contains(body, "x | <") {
		t.Errorf("name reached the markdown raw:\n%s", body)
	}
	if !strings.Contains(body, `x \| &lt;img src=y&gt; \`+"`z\\`") {
		t.Errorf("escaped name missing:\n%s", body)
	}
	if strings.Count(body, "-->") != 2 { // marker and data only
		t.Errorf("a name closed an HTML comment:\n%s", body)
	}
}

func TestNoChangesSaysSo(t *testing.T) {
	r := &report.Report{Builds: []report.Build{{Name: "a", Status: report.StatusOK, DurationMs: 1020}}}
	body := CommentBody("<!-- m -->", r, nil, dataPrefix+`{"a":1000} -->`)
	if !strings.Contains(body, "No build got more than 5% slower or faster.") {
		t.Errorf("body:\n%s", body)
	}
}
