package github

import (
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/report"
)

func TestReportSummaryPutsTheSectionAfterTheTableWithinTheRoom(t *testing.T) {
	r := &report.Report{Complete: true, Builds: []report.Build{{Name: "resnet", Backend: "sim", Status: report.StatusFailed, Reason: "parser error"}}}
	got := ReportSummary(func(*report.Report) string { return "### Build times against the baseline\n" })(r, 2000)
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
func TestNotesMarkdownIsEscaped(t *testing.T) {
	got := NotesMarkdown([]string{"could not comment: 422 @octocat <b>x</b> | y\nz", "second"})
	for _, bad := range []string{"@octocat", "<b>", " | y", "\nz"} {
		if strings.Contains(got, bad) {
			t.Errorf("summary note holds %q unescaped:\n%s", bad, got)
		}
	}
	if !strings.HasPrefix(got, "\n> [!NOTE]\n> could not comment: 422 ") || !strings.HasSuffix(got, "\n> [!NOTE]\n> second\n") {
		t.Errorf("summary notes lost their text:\n%s", got)
	}
	if NotesMarkdown(nil) != "" {
		t.Error("no notices, yet notes")
	}
}
