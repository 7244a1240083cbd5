package github

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/trt-action/trt-action/internal/report"
)

// MaxCommentChars is GitHub's limit on a comment body. Bodies are cut by
// bytes, which never exceeds the character count.
const MaxCommentChars = 65536

// ChangeThreshold is how much a build's time must move, in percent, for the
// comment to list it as slower or faster than in the previous run.
const ChangeThreshold = 5.0

const dataPrefix = "<!-- trt-action-data: "

// dataRe finds the previous run's durations. The JSON inside cannot contain
// "-->": json.Marshal escapes '>' as \u003e.
var dataRe = regexp.MustCompile(`<!-- trt-action-data: (\{.*?\}) -->`)

// CommentBody renders the sticky comment: the hidden marker, the summary,
// the builds whose time changed by more than ChangeThreshold percent since
// the comment's previous content, and the hidden durations the next run
// compares with. It is cut to MaxCommentChars with a note. A nil summary
// uses a plain table.
func CommentBody(marker string, r *report.Report, summary func(*report.Report) string, previous string) string {
	if summary == nil {
		summary = plainSummary
	}
	main := strings.TrimRight(summary(r), "\n") + "\n"
	if prev, ok := previousDurations(previous); ok {
		main += "\n" + changesSection(r, prev)
	}
	return fitComment(marker+"\n", main, "\n"+dataComment(r)+"\n")
}

const shortenedNote = "\n> [!NOTE]\n> This comment was shortened to fit GitHub's limit of 65,536 characters; the job summary and the report have everything.\n"

// fitComment joins head, main and tail, cutting main at a line end (and
// dropping tail, the comparison data, only if even that is not enough).
func fitComment(head, main, tail string) string {
	if len(head)+len(main)+len(tail) <= MaxCommentChars {
		return head + main + tail
	}
	room := MaxCommentChars - len(head) - len(tail) - len(shortenedNote)
	if room < MaxCommentChars/2 { // the data would crowd out the table
		tail = ""
		room = MaxCommentChars - len(head) - len(shortenedNote)
	}
	return head + cutAtLine(main, room) + shortenedNote + tail
}

// cutAtLine returns the longest prefix of s of at most n bytes that ends at
// a line end, or at a rune boundary when the first line is already too long.
func cutAtLine(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		return cut[:i+1]
	}
	for len(cut) > 0 && !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut + "\n"
}

// dataComment records each successful build's duration for the next run.
func dataComment(r *report.Report) string {
	d := map[string]int64{}
	for _, b := range r.Builds {
		if b.Status == report.StatusOK {
			d[b.Name] = b.DurationMs
		}
	}
	data, _ := json.Marshal(d) // a map of strings to ints always marshals
	return dataPrefix + string(data) + " -->"
}

// previousDurations reads the durations a previous body recorded; ok is
// false when there is no previous body or it has no data.
func previousDurations(body string) (map[string]int64, bool) {
	m := dataRe.FindStringSubmatch(body)
	if m == nil {
		return nil, false
	}
	var d map[string]int64
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		return nil, false
	}
	return d, true
}

// change is one build whose time moved.
type change struct {
	name        string
	before, now int64
	percent     float64
}

func changesSection(r *report.Report, prev map[string]int64) string {
	slower, faster := changes(r, prev)
	var sb strings.Builder
	sb.WriteString("### Compared with the previous run\n\n")
	if len(slower) == 0 && len(faster) == 0 {
		fmt.Fprintf(&sb, "No build got more than %g%% slower or faster.\n", ChangeThreshold)
		return sb.String()
	}
	writeChanges(&sb, "Slower", slower)
	writeChanges(&sb, "Faster", faster)
	return sb.String()
}

// changes lists successful builds that also succeeded last time and moved by
// more than ChangeThreshold percent, biggest change first.
func changes(r *report.Report, prev map[string]int64) (slower, faster []change) {
	for _, b := range r.Builds {
		before, ok := prev[b.Name]
		if !ok || before <= 0 || b.Status != report.StatusOK {
			continue
		}
		c := change{name: b.Name, before: before, now: b.DurationMs}
		c.percent = float64(c.now-c.before) / float64(c.before) * 100
		switch {
		case c.percent > ChangeThreshold:
			slower = append(slower, c)
		case c.percent < -ChangeThreshold:
			faster = append(faster, c)
		}
	}
	byMagnitude := func(cs []change) {
		sort.SliceStable(cs, func(i, j int) bool { return abs(cs[i].percent) > abs(cs[j].percent) })
	}
	byMagnitude(slower)
	byMagnitude(faster)
	return slower, faster
}

func writeChanges(sb *strings.Builder, title string, cs []change) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(sb, "**%s**\n\n| Build | Before | Now | Change |\n|---|---:|---:|---:|\n", title)
	for _, c := range cs {
		fmt.Fprintf(sb, "| %s | %s | %s | %+.1f%% |\n", mdCell(c.name), ms(c.before), ms(c.now), c.percent)
	}
	sb.WriteString("\n")
}

// plainSummary is the table used when no summary renderer is passed.
func plainSummary(r *report.Report) string {
	var sb strings.Builder
	sb.WriteString("| Build | Backend | Status | Time |\n|---|---|---|---:|\n")
	for _, b := range r.Builds {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", mdCell(b.Name), mdCell(b.Backend), mdCell(b.Status), ms(b.DurationMs))
	}
	return sb.String()
}

// mdCell makes text safe inside a table cell: no pipes or line breaks to
// break the table, no HTML or markdown that would render.
func mdCell(s string) string {
	var sb strings.Builder
	for _, r := range s {
		switch r {
		case '\n', '\r':
			sb.WriteByte(' ')
		case '<':
			sb.WriteString("&lt;")
		case '>':
			sb.WriteString("&gt;")
		case '&':
			sb.WriteString("&amp;")
		case '|', '\\', '`', '*', '_', '[', ']', '~', '#', '@':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

func ms(v int64) string {
	return (time.Duration(v) * time.Millisecond).Round(100 * time.Millisecond).String()
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
