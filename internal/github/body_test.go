package github

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trt-action/trt-action/internal/report"
)

func okBuilds(n int, name func(i int) string, ms func(i int) int64) *report.Report {
	r := &report.Report{}
	for i := range n {
		r.Builds = append(r.Builds, report.Build{Name: name(i), Status: report.StatusOK, DurationMs: ms(i)})
	}
	return r
}

func TestCommentBodyIsCappedAndKeepsItsData(t *testing.T) {
	r := okBuilds(300, func(i int) string { return fmt.Sprintf("b%d", i) }, func(i int) int64 { return int64(i + 1) })
	huge := func(*report.Report, int) string { return strings.Repeat("| row with ünïcödé text |\n", 5000) }
	body := commentBody("<!-- m -->", r, huge, "")
	if len(body) > maxCommentChars {
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

func TestSummaryIsToldItsRoom(t *testing.T) {
	var room int
	body := commentBody("<!-- m -->", okBuilds(1, func(int) string { return "a" }, func(int) int64 { return 5 }),
		func(_ *report.Report, maxBytes int) string { room = maxBytes; return strings.Repeat("x\n", maxBytes/2) }, "")
	if room < maxCommentChars/2 || len(body) > maxCommentChars || strings.Contains(body, "shortened") {
		t.Errorf("room %d, body %d bytes; a summary that fits its room must not be cut", room, len(body))
	}
}

// tenThousand has builds with long names in several scripts, each 10%
// slower than in previous.
func tenThousand() (r *report.Report, previous string) {
	name := func(i int) string {
		return fmt.Sprintf("模型-ünïcödé-%s-%05d", strings.Repeat("名前|<>", 12), i)
	}
	before := okBuilds(10000, name, func(i int) int64 { return int64(1000 + 10*i) })
	r = okBuilds(10000, name, func(i int) int64 { return int64(1100 + 11*i) })
	return r, "<!-- m -->\n" + dataComment(before)
}

func TestTenThousandBuildsStayUnderTheLimit(t *testing.T) {
	r, previous := tenThousand()
	body := commentBody("<!-- m -->", r, func(r *report.Report, _ int) string { return plainSummary(r) }, previous)
	if len(body) > maxCommentChars || utf8.RuneCountInString(body) > maxCommentChars {
		t.Fatalf("body is %d bytes", len(body))
	}
	if !utf8.ValidString(body) {
		t.Error("cut inside a character")
	}
	cmp := strings.Index(body, "### Compared with the previous run")
	table := strings.Index(body, "| Build | Backend |")
	if cmp < 0 || table < 0 || cmp > table {
		t.Fatalf("comparison at %d, summary at %d: the comparison must come first", cmp, table)
	}
	if rows := strings.Count(body[cmp:table], "% |\n"); rows != maxListedChanges {
		t.Errorf("comparison lists %d builds, want %d", rows, maxListedChanges)
	}
	// The data keeps the longest builds, so the changes listed are the
	// biggest in time: the highest-numbered names.
	if !strings.Contains(body[cmp:table], "09999") || strings.Contains(body[cmp:table], "-00000") {
		t.Errorf("the biggest changes are not the ones listed:\n%s", body[cmp:table])
	}
	if !strings.Contains(body, "…and ") {
		t.Error("no count of the changes left out")
	}
	data, ok := previousDurations(body)
	if !ok || len(data) == 0 || len(data) > maxDataBuilds {
		t.Fatalf("data: ok=%v, %d builds", ok, len(data))
	}
	if len(dataComment(r)) > len(dataPrefix)+maxDataBytes+len("} -->") {
		t.Errorf("data is %d bytes", len(dataComment(r)))
	}
	if !strings.Contains(body, "shortened to fit") {
		t.Error("the summary of 10,000 builds cannot fit uncut")
	}
}

func TestDataIsCappedAtTheLongestBuilds(t *testing.T) {
	r := okBuilds(4000, func(i int) string { return fmt.Sprintf("%x", i) }, func(i int) int64 { return int64(i) })
	data, ok := previousDurations(dataComment(r))
	if !ok || len(data) != maxDataBuilds {
		t.Fatalf("ok=%v, %d builds, want %d", ok, len(data), maxDataBuilds)
	}
	if _, kept := data[fmt.Sprintf("%x", 3999)]; !kept {
		t.Error("the longest build was dropped")
	}
	if _, kept := data[fmt.Sprintf("%x", 1999)]; kept {
		t.Error("a shorter build was kept over longer ones")
	}

	huge := okBuilds(1, func(int) string { return strings.Repeat("x", maxDataBytes) }, func(int) int64 { return 9e6 })
	huge.Builds = append(huge.Builds, report.Build{Name: "small", Status: report.StatusOK, DurationMs: 1})
	if data, _ := previousDurations(dataComment(huge)); len(data) != 1 || data["small"] != 1 {
		t.Errorf("a name too long for the data shut out the rest: %v", data)
	}
}

func TestChangesUnderOneSecondAreNoise(t *testing.T) {
	r := &report.Report{Builds: []report.Build{
		{Name: "tiny", Status: report.StatusOK, DurationMs: 900},     // 300 -> 900: both under 1s
		{Name: "crosses", Status: report.StatusOK, DurationMs: 1500}, // 500 -> 1500
	}}
	body := commentBody("<!-- m -->", r, nil, dataPrefix+`{"tiny":300,"crosses":500} -->`)
	body, _, _ = strings.Cut(body, "| Build | Backend |") // the comparison only
	if strings.Contains(body, "| tiny |") || !strings.Contains(body, "| crosses | 500ms | 1.5s | +200.0% |") {
		t.Errorf("body:\n%s", body)
	}
}

func TestCommentBodyNamesAreEscaped(t *testing.T) {
	r := &report.Report{Builds: []report.Build{{Name: "x | <img src=y> `z`", Status: report.StatusOK, DurationMs: 2000}}}
	prev := dataPrefix + `{"x | \u003cimg src=y\u003e ` + "`z`" + `":1000} -->`
	body := commentBody("<!-- m -->", r, nil, prev)
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
	body := commentBody("<!-- m -->", r, nil, dataPrefix+`{"a":1000} -->`)
	if !strings.Contains(body, "No build got more than 5% slower or faster") {
		t.Errorf("body:\n%s", body)
	}
}
