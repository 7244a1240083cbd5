package github

import (
	"strings"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// ReportSummary is the summary the comment and the check run show: the
// job summary's own renderer (report.Summary), with section (the baseline
// comparison; nil for none) after its table, in the room the comment or
// check run leaves it, so the renderer drops whole sections rather than
// the comment cutting lines.
func ReportSummary(section func(*report.Report) string) SummaryFunc {
	return func(r *report.Report, maxBytes int) string {
		opts := report.SummaryOptions{MaxBytes: max(maxBytes, 1)}
		if section != nil {
			opts.Comparison = section(r)
		}
		return report.Summary(r, opts)
	}
}

// NotesMarkdown is Publish's notices as notes at the end of the job
// summary, one GitHub note block each. A notice quotes GitHub's error,
// which can quote input: escaped as any other text we do not control.
// The summary renderer keeps the summary under 1,000,000 bytes, so a few
// notes stay within the runner's 1 MiB limit.
func NotesMarkdown(notices []string) string {
	var sb strings.Builder
	for _, n := range notices {
		sb.WriteString("\n> [!NOTE]\n> " + text.Markdown(n) + "\n")
	}
	return sb.String()
}
