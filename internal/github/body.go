package github

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/trt-action/trt-action/internal/report"

	"github.com/trt-action/trt-action/internal/text"
)

// maxCommentChars is GitHub's limit on a comment body. Bodies are measured
// in bytes, which never undercount characters.
const maxCommentChars = 65536

// changeThreshold is how much a build's time must move, in percent, for the
// comment to list it as slower or faster than in the previous run.
const changeThreshold = 5.0

const (
	// noiseFloorMs: a change between two times both under a second is
	// start-up jitter, not a regression, whatever its percentage.
	noiseFloorMs = 1000
	// maxListedChanges caps the comparison table, which comes before the
	// summary so that the cut for length never reaches it.
	maxListedChanges = 20
	// maxChangeNameRunes shortens build names in the comparison table so
	// that its size stays bounded (20 rows of at most ~450 bytes).
	maxChangeNameRunes = 80
	// maxDataBuilds and maxDataBytes cap the hidden durations. Uncapped
	// they would crowd the summary out from about a thousand builds on.
	// The longest builds are kept: their changes cost the most time.
	maxDataBuilds = 2000
	maxDataBytes  = 24 << 10
)

const dataPrefix = "<!-- trt-action-data: "

// dataRe finds the previous run's durations. The JSON inside cannot contain
// "-->": json.Marshal escapes '>' as \u003e.
var dataRe = regexp.MustCompile(`<!-- trt-action-data: (\{.*?\}) -->`)

// commentBody renders the sticky comment: the hidden marker; the builds
// whose time changed by more than changeThreshold percent since the
// comment's previous content (at most maxListedChanges of them); the
// summary, in the room left; and the hidden durations the next run compares
// with. The comparison and the data have bounded sizes and room reserved
// for them, so only the summary is ever cut, with a note, to keep the body
// within maxCommentChars. A nil summary uses a plain table.
func commentBody(marker string, r *report.Report, summary SummaryFunc, previous string) string {
	head := marker + "\n"
	comparison := ""
	if prev, ok := previousDurations(previous); ok {
		comparison = changesSection(r, prev) + "\n"
	}
	data := "\n" + dataComment(r) + "\n"
	room := maxCommentChars - len(head) - len(comparison) - len(data)
	main := strings.TrimRight(summaryOf(summary, r, room), "\n") + "\n"
	if len(main) > room {
		main = text.CutAtLine(main, room-len(shortenedNote)) + shortenedNote
	}
	return head + comparison + main + data
}

const shortenedNote = "\n> [!NOTE]\n> This comment was shortened to fit GitHub's limit of 65,536 characters; the job summary and the report have everything.\n"

// dataComment records successful builds' durations for the next run: the
// longest first (ties by name), at most maxDataBuilds of them in at most
// maxDataBytes of JSON. An entry that does not fit is skipped, so one
// enormous name cannot shut the others out. A cache hit records the time
// of the build that made its engine (report.BuildTime): the next run that
// builds it again compares with a build, not with a cache lookup.
func dataComment(r *report.Report) string {
	type timed struct {
		name string
		ms   int64
	}
	ok := make([]timed, 0, len(r.Builds))
	for i := range r.Builds {
		if ms, known := report.BuildTime(&r.Builds[i]); known {
			ok = append(ok, timed{r.Builds[i].Name, ms})
		}
	}
	sort.SliceStable(ok, func(i, j int) bool {
		if ok[i].ms != ok[j].ms {
			return ok[i].ms > ok[j].ms
		}
		return ok[i].name < ok[j].name
	})
	var sb strings.Builder
	sb.WriteString(dataPrefix + "{")
	kept, seen := 0, map[string]bool{}
	for _, b := range ok {
		if kept == maxDataBuilds {
			break
		}
		if seen[b.name] {
			continue // a duplicate key would make the JSON ambiguous
		}
		entry := text.QuoteJSON(b.name) + ":" + strconv.FormatInt(b.ms, 10)
		if kept > 0 {
			entry = "," + entry
		}
		if sb.Len()+len(entry) > len(dataPrefix)+maxDataBytes {
			continue
		}
		sb.WriteString(entry)
		kept++
		seen[b.name] = true
	}
	sb.WriteString("} -->")
	return sb.String()
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

func (c change) deltaMs() int64 {
	if c.now > c.before {
		return c.now - c.before
	}
	return c.before - c.now
}

func changesSection(r *report.Report, prev map[string]int64) string {
	all := changes(r, prev)
	var sb strings.Builder
	sb.WriteString("### Compared with the previous run\n\n")
	if len(all) == 0 {
		fmt.Fprintf(&sb, "No build got more than %g%% slower or faster (builds under 1s in both runs are not compared).\n", changeThreshold)
		return sb.String()
	}
	listed := all[:min(len(all), maxListedChanges)]
	var slower, faster []change
	for _, c := range listed {
		if c.now > c.before {
			slower = append(slower, c)
		} else {
			faster = append(faster, c)
		}
	}
	writeChanges(&sb, "Slower", slower)
	writeChanges(&sb, "Faster", faster)
	if more := len(all) - len(listed); more > 0 {
		fmt.Fprintf(&sb, "…and %d more that changed by more than %g%%, each by less time than those above.\n", more, changeThreshold)
	}
	return sb.String()
}

// changes lists builds built now (ok: a cache hit measured no build) that
// also succeeded last time and moved by more than changeThreshold percent,
// ignoring builds under noiseFloorMs in both runs. The biggest change in
// time comes first: a build that went from
// 10 to 13 minutes matters more than one that went from 1 to 2 seconds.
func changes(r *report.Report, prev map[string]int64) []change {
	var out []change
	for _, b := range r.Builds {
		before, ok := prev[b.Name]
		if !ok || before <= 0 || b.Status != report.StatusOK {
			continue
		}
		if before < noiseFloorMs && b.DurationMs < noiseFloorMs {
			continue
		}
		c := change{name: b.Name, before: before, now: b.DurationMs}
		c.percent = float64(c.now-c.before) / float64(c.before) * 100
		if abs(c.percent) > changeThreshold {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].deltaMs() != out[j].deltaMs() {
			return out[i].deltaMs() > out[j].deltaMs()
		}
		return out[i].name < out[j].name
	})
	return out
}

func writeChanges(sb *strings.Builder, title string, cs []change) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(sb, "**%s**\n\n| Build | Before | Now | Change |\n|---|---:|---:|---:|\n", title)
	for _, c := range cs {
		fmt.Fprintf(sb, "| %s | %s | %s | %+.1f%% |\n", text.Markdown(text.CutRunes(c.name, maxChangeNameRunes)), text.PreciseMs(c.before), text.PreciseMs(c.now), c.percent)
	}
	sb.WriteString("\n")
}

// plainSummary is the table used when no summary renderer is passed.
func plainSummary(r *report.Report) string {
	var sb strings.Builder
	sb.WriteString("| Build | Backend | Status | Time |\n|---|---|---|---:|\n")
	for _, b := range r.Builds {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", text.Markdown(b.Name), text.Markdown(b.Backend), text.Markdown(b.Status), text.DurationMs(b.DurationMs))
	}
	return sb.String()
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
