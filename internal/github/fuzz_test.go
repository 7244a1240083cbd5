package github

import (
	"bytes"
	"encoding/xml"
	"html"
	"io"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/trt-action/trt-action/internal/baseline"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
	"github.com/trt-action/trt-action/internal/text/texttest"
)

// FuzzRenderersKeepTextInert renders every output GitHub shows (job
// summary, baseline table, pull-request comment, check-run text and
// annotations, JUnit) from a report whose build names, phase names and
// TensorRT messages are the fuzzer's, and checks that none of them holds a
// live mention or reference, an unbalanced Markdown or HTML construct, or a
// control character.
func FuzzRenderersKeepTextInert(f *testing.F) {
	for _, seed := range [][3]string{
		{"fix-@octocat", "Timing #12 @org/team", "see GH-7 and owner/repo#8 by @someone"},
		{"a|b`c", "</details><details>", "<pre>`` ``` </pre> <!-- --> &#64;x"},
		{"x\u202egnp.exe", "phase\x1b[2J\n::error::x", "line\r\nbreak\tand\x00nul \\@escaped \\#9"},
		{"```", "| --- |", "[link](javascript:x) *bold* $math$ ~strike~"},
		{"\xff\xfe", "@", "#"},
		{"&commat;octocat", "&#x40;team", "&num;12 &#35;3 &#X23;4"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, name, phase, message string) {
		r := untrustedReport(name, phase, message)
		summary := report.Summary(r, report.SummaryOptions{})
		deltas := baseline.DeltaTable(baseline.Compare(r, untrustedReport(name+"x", phase, message), matrix.Regression{}), matrix.Regression{})
		outputs := map[string]string{
			"summary":        summary,
			"short summary":  report.Summary(r, report.SummaryOptions{MaxBytes: 700}),
			"tiny summary":   report.Summary(r, report.SummaryOptions{MaxBytes: 120}),
			"baseline table": deltas,
			"comment": commentBody("<!-- trt-action:key -->", r, func(r *report.Report, n int) string {
				return report.Summary(r, report.SummaryOptions{MaxBytes: n})
			}, "<!-- trt-action-data: {\"@x\":1} -->"),
			"check-run text": plainSummary(r),
		}
		for _, a := range annotations(r, nil) {
			outputs["annotation"] += a.GetTitle() + "\n" + a.GetMessage() + "\n"
		}
		var junit bytes.Buffer
		if err := report.WriteJUnit(&junit, r); err != nil {
			t.Fatal(err)
		}
		junitText, err := xmlText(junit.Bytes())
		if err != nil {
			t.Fatalf("JUnit is not XML: %v\n%s", err, junit.String())
		}
		outputs["JUnit"] = junitText
		for what, out := range outputs {
			for _, problem := range inertProblems(out, what != "JUnit" && what != "annotation") {
				t.Errorf("%s: %s\n%s", what, problem, out)
			}
		}
	})
}

// untrustedReport is a report in which every text a build, TensorRT or the
// matrix file can choose is the fuzzer's.
func untrustedReport(name, phase, message string) *report.Report {
	phases := []*report.Phase{{Name: phase, EndMs: 900, Steps: 2, Done: 2, Children: []*report.Phase{
		{Name: phase, StartMs: 10, EndMs: 800, Steps: 1, Done: 1},
	}}}
	return &report.Report{
		Tool: "trt-action " + message, Matrix: name + ".yml", DurationMs: 2000, Complete: true,
		Builds: []report.Build{
			{Name: name, Backend: message, Status: report.StatusOK, DurationMs: 40_000, GPU: message,
				Phases: phases, Library: message, Engine: &report.Engine{Path: name + ".engine"}},
			{Name: name + "-2", Backend: "sim", Status: report.StatusBudgetExceeded, DurationMs: 900,
				Reason: message, Warnings: []string{message}, Phases: phases,
				Budget: &report.BudgetHit{Kind: "phase", Phase: phase + "/" + phase, Pattern: message, LimitMs: 500, ElapsedMs: 900},
				Log:    []report.LogLine{{Severity: "error", Text: message}, {Severity: message, Text: message}}},
			untrustedScript(name+"-3", report.StatusFailed, phase, message, phases),
			untrustedScript(name+"-4", report.StatusOK, phase, message, nil),
		},
	}
}

// untrustedScript is a build that ran a command, in which the command, its
// output, and everything its TensorRT builds report are the fuzzer's.
func untrustedScript(name, status, phase, message string, phases []*report.Phase) report.Build {
	tensor := report.Tensor{Name: phase, DType: message, Shape: []int64{-1, 3}}
	inner := report.TensorRTBuild{Index: 1, PID: 7, Entry: message, Route: phase, Library: message, DurationMs: 800,
		Status: status, Reason: message, Phases: phases, SerializedBytes: 12,
		Settings: &report.Settings{Applied: map[string]any{"precision": message, phase: []string{message}}},
		Network:  &report.Network{Inputs: []report.Tensor{tensor}, Outputs: []report.Tensor{tensor}, Layers: 3}}
	return report.Build{Name: name, Backend: "sim", Status: status, DurationMs: 900, Reason: message,
		Warnings: []string{message},
		Script: &report.Script{Command: []string{message, phase}, Workdir: message, Exit: message, Unobserved: message,
			OutputTail: []string{message, phase, name}},
		TensorRTBuilds: []report.TensorRTBuild{inner},
		Engines:        []report.Engine{{Path: message + ".engine", Bytes: 1}}}
}

// xmlText is every attribute value and character datum of an XML document,
// one per line, as a reader of the document sees them.
func xmlText(doc []byte) (string, error) {
	var sb strings.Builder
	dec := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return sb.String(), nil
		}
		if err != nil {
			return "", err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			for _, a := range tok.Attr {
				sb.WriteString(a.Value + "\n")
			}
		case xml.CharData:
			sb.Write(tok)
			sb.WriteString("\n")
		}
	}
}

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	fencedBlock = regexp.MustCompile("(?ms)^```.*?^```$")
	codeSpan    = regexp.MustCompile("`[^`]*`")
	backslashed = regexp.MustCompile(`\\([[:punct:]])`)
	rawTag      = regexp.MustCompile(`</?([a-zA-Z][a-zA-Z0-9]*)`)
	preBlock    = regexp.MustCompile(`(?s)<pre>.*?</pre>`)
	// escapedBacktick stands for "\\`" while code spans are found.
	escapedBacktick = "\uE000"
	// ownTags are the HTML elements the renderers write themselves.
	ownTags = map[string]bool{"details": true, "summary": true, "pre": true, "sub": true}
)

// inertProblems lists what is wrong with out: a control or bidirectional
// character anywhere; a mention or issue reference GitHub would link, in the
// text it links them in (after Markdown escapes and entities, outside code
// and comments); and, for Markdown, an HTML element the renderers do not
// write, an element opened and not closed, an odd code fence or code span,
// or a table row with more or fewer cells than its header.
func inertProblems(out string, markdown bool) []string {
	var problems []string
	for _, r := range out {
		if r != '\n' && (unicode.IsControl(r) || text.IsBidiControl(r)) {
			problems = append(problems, "control character "+strings.ToUpper(string(rune(r)))+" ("+string(rune(r))+")")
			break
		}
	}
	visible := out
	if markdown {
		visible = markdownText(visible)
	}
	visible = html.UnescapeString(visible)
	// A mention or issue reference as GitHub's patterns find them
	// (texttest, restated apart from text.Neutral).
	for _, l := range texttest.LiveIn(visible) {
		problems = append(problems, "live mention or reference "+l.Text)
	}
	if markdown {
		problems = append(problems, markdownProblems(out)...)
	}
	return problems
}

// markdownText is the text of Markdown as GitHub links in it, one text
// node a line: a comment, a code block or a code span ends a node (a line
// break here), an escaped backtick starts no code span, and a <pre>
// block's lines are literal, as GitHub shows them (checked, although
// GitHub links nothing in them).
func markdownText(md string) string {
	var nodes []string
	rest := md
	for rest != "" {
		block := preBlock.FindStringIndex(rest)
		if block == nil {
			block = []int{len(rest), len(rest)}
		}
		prose := htmlComment.ReplaceAllString(rest[:block[0]], "\n")
		prose = fencedBlock.ReplaceAllString(prose, "\n")
		prose = strings.ReplaceAll(prose, "\\`", escapedBacktick)
		prose = codeSpan.ReplaceAllString(prose, "\n")
		prose = backslashed.ReplaceAllString(strings.ReplaceAll(prose, escapedBacktick, "\\`"), "$1")
		nodes = append(nodes, prose, rest[block[0]:block[1]])
		rest = rest[block[1]:]
	}
	return strings.Join(nodes, "\n")
}

func markdownProblems(out string) []string {
	var problems []string
	// A <pre> block is an HTML block up to the line that holds </pre>
	// (CommonMark's HTML block kind 1): a quoted line of output that
	// starts with ``` in it is text, not a fence.
	body := preBlock.ReplaceAllString(htmlComment.ReplaceAllString(out, ""), "<pre>\n</pre>")
	if n := strings.Count(body, "\n```"); strings.HasPrefix(body, "```") || n%2 != 0 {
		problems = append(problems, "unbalanced code fence")
	}
	outsideFences := fencedBlock.ReplaceAllString(body, "")
	for _, m := range rawTag.FindAllStringSubmatch(outsideFences, -1) {
		if !ownTags[strings.ToLower(m[1])] {
			problems = append(problems, "raw HTML tag "+m[0])
		}
	}
	for tag := range ownTags {
		if open, closed := strings.Count(outsideFences, "<"+tag+">"), strings.Count(outsideFences, "</"+tag+">"); open != closed {
			problems = append(problems, "unbalanced <"+tag+">")
		}
	}
	cells, inPre := -1, false
	for _, line := range strings.Split(outsideFences, "\n") {
		// Lines of an HTML block are not Markdown: a <pre> block, and a
		// line that starts with <details>.
		if strings.HasPrefix(line, "<pre>") {
			inPre = true
		}
		if inPre || strings.HasPrefix(line, "<details>") {
			inPre = inPre && !strings.HasPrefix(line, "</pre>")
			continue
		}
		if strings.Count(strings.ReplaceAll(line, "\\\\", ""), "`")-strings.Count(strings.ReplaceAll(line, "\\\\", ""), "\\`") != 0 {
			problems = append(problems, "unescaped backtick in "+line)
		}
		if !strings.HasPrefix(line, "|") {
			cells = -1
			continue
		}
		n := unescapedPipes(line)
		if cells < 0 {
			cells = n
		} else if n != cells {
			problems = append(problems, "table row with a different number of cells: "+line)
		}
	}
	return problems
}

// unescapedPipes counts the cell separators of a table row: pipes not
// escaped by an odd run of backslashes.
func unescapedPipes(line string) int {
	n, backslashes := 0, 0
	for _, c := range []byte(line) {
		switch c {
		case '\\':
			backslashes++
			continue
		case '|':
			if backslashes%2 == 0 {
				n++
			}
		}
		backslashes = 0
	}
	return n
}
