// Package outputs writes what a run leaves behind besides its engines: the
// JSON report and the summary after every build (so a cancelled run still
// has both), and at the end the JUnit file and the step outputs. Every file
// goes through internal/atomicfile. It keeps, for each output, whether its
// latest write failed, so the run can name every failure at the end.
package outputs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/text"
)

// Outputs are one run's outputs. Each is written whether or not another
// one failed; every failure is kept, and reported at the end.
type Outputs struct {
	gha         *actions.Actions
	reportPath  string
	summaryPath string
	junitPath   string
	eventsPath  string // --events FILE; "" for none or stdout (-)
	summaryName string // how the user named the summary: --summary or $GITHUB_STEP_SUMMARY
	// streams are the outputs that are not regular files (a FIFO,
	// /dev/stdout): they take one document, written at the end.
	streams map[string]bool
	failed  []failure // the latest failure of each output, in order
	// Extra is appended to the summary (the baseline comparison).
	Extra func(*report.Report) string
}

// failure is an output that could not be written, named as the user
// named it (a flag or a variable).
type failure struct {
	output string
	err    error
}

// Paths are where the outputs go, as the user named them.
type Paths struct {
	Report  string // required
	Summary string // "": $GITHUB_STEP_SUMMARY, when set
	JUnit   string // "": none
	Events  string // --events, written by the JSON Lines view; "" or "-" (stdout): no file to check
}

// New returns the outputs at p, in the Actions environment gha.
func New(gha *actions.Actions, p Paths) *Outputs {
	o := &Outputs{gha: gha, reportPath: p.Report, summaryPath: p.Summary, junitPath: p.JUnit,
		summaryName: "--summary", streams: map[string]bool{}}
	if o.summaryPath == "" {
		o.summaryPath, o.summaryName = o.gha.StepSummaryPath(), "$GITHUB_STEP_SUMMARY"
	}
	if p.Events != "-" {
		o.eventsPath = p.Events
	}
	for _, path := range []string{o.reportPath, o.summaryPath} {
		o.streams[path] = path != "" && atomicfile.IsStream(path)
	}
	return o
}

// Check finds, before any work, every output that cannot be written,
// creating the folders of the report, summary, JUnit and events files.
// ending says what a failure means, e.g. "no build was started".
func (o *Outputs) Check(ending string) error {
	var fails []failure
	add := func(output string, err error) {
		if err != nil {
			fails = append(fails, failure{output, err})
		}
	}
	add("--report", atomicfile.Check(o.reportPath))
	if o.summaryPath != "" {
		add(o.summaryName, atomicfile.Check(o.summaryPath))
	}
	if o.junitPath != "" {
		add("--junit", atomicfile.Check(o.junitPath))
	}
	if o.eventsPath != "" {
		add("--events", atomicfile.Check(o.eventsPath))
	}
	if o.gha.InActions() {
		add("$GITHUB_OUTPUT", o.gha.CheckOutputFile())
	}
	if len(fails) == 0 {
		return nil
	}
	return Error{fails: fails, ending: ending}
}

// Files are the outputs, named as the user named them, for
// runfiles.Check, each with how it is written: the report, the summary,
// the JUnit file and the event stream (atomicfile.Live, in the events
// view) are replaced by a rename; $GITHUB_OUTPUT is appended to in place.
func (o *Outputs) Files() []runfiles.File {
	files := []runfiles.File{
		{Path: o.reportPath, Role: runfiles.Output, What: "--report", Noun: "the report (--report)"},
		{Path: o.summaryPath, Role: runfiles.Output, What: o.summaryName, Noun: "the summary (" + o.summaryName + ")"},
		{Path: o.junitPath, Role: runfiles.Output, What: "--junit", Noun: "the JUnit file (--junit)"},
		{Path: o.eventsPath, Role: runfiles.Output, What: "--events", Noun: "the event stream (--events)"},
	}
	if o.gha.InActions() {
		files = append(files, runfiles.File{Path: o.gha.OutputPath(), Role: runfiles.Appended, What: "$GITHUB_OUTPUT", Noun: "the step outputs ($GITHUB_OUTPUT)"})
	}
	return slices.DeleteFunc(files, func(f runfiles.File) bool { return f.Path == "" })
}

// record keeps the outcome of one write: a later success clears an
// earlier failure of the same output (the file now holds the latest).
func (o *Outputs) record(output string, err error) {
	for i, f := range o.failed {
		if f.output == output {
			if err == nil {
				o.failed = append(o.failed[:i], o.failed[i+1:]...)
			} else {
				o.failed[i].err = err
			}
			return
		}
	}
	if err != nil {
		o.failed = append(o.failed, failure{output, err})
	}
}

// Checkpoint rewrites the report and summary files. Streams wait for the
// end: a reader of a FIFO or stdout expects one document, and a FIFO
// nobody reads yet would block the run.
func (o *Outputs) Checkpoint(r *report.Report) {
	if !o.streams[o.reportPath] {
		o.writeReport(r)
	}
	if o.summaryPath != "" && !o.streams[o.summaryPath] {
		o.writeSummary(r)
	}
}

func (o *Outputs) writeReport(r *report.Report) {
	o.record("--report", report.WriteJSON(o.reportPath, r))
}

func (o *Outputs) writeSummary(r *report.Report) {
	// The extra section counts against GitHub's 1 MiB (Summary keeps
	// to it): over it, the runner drops the whole summary.
	extra := ""
	if o.Extra != nil {
		extra = o.Extra(r)
	}
	summary := report.Summary(r, report.SummaryOptions{Comparison: extra})
	o.record(o.summaryName, atomicfile.Write(o.summaryPath, []byte(summary)))
}

// Final writes what is written once (streams, the JUnit file, the step
// outputs) and returns every output that could not be written (an Error),
// or nil. A step output that cannot be written safely is an error, never a
// partial write.
func (o *Outputs) Final(r *report.Report) error {
	if o.streams[o.reportPath] {
		o.writeReport(r)
	}
	if o.summaryPath != "" && o.streams[o.summaryPath] {
		o.writeSummary(r)
	}
	if o.junitPath != "" {
		o.record("--junit", writeJUnit(o.junitPath, r))
	}
	if o.gha.InActions() {
		o.setStepOutputs(r)
	}
	if len(o.failed) == 0 {
		return nil
	}
	return Error{fails: o.failed}
}

// setStepOutputs writes each step output on its own, so one that cannot
// be written costs no other. Outputs that failed alike (an unwritable
// $GITHUB_OUTPUT fails them all) are reported together.
func (o *Outputs) setStepOutputs(r *report.Report) {
	values := [][2]string{
		{"report", o.reportPath}, {"summary", o.summaryPath},
		{"succeeded", fmt.Sprint(countOK(r))}, {"failed", fmt.Sprint(len(r.Builds) - countOK(r))},
		{"cached", fmt.Sprint(countCached(r))}, {"stored", fmt.Sprint(countStored(r))},
		{"pushed", fmt.Sprint(report.SharedCacheUse(r).Pushes)}, {"engines", engineMap(r)},
	}
	var causes []string
	names := map[string][]string{}
	errs := map[string]error{}
	for _, kv := range values {
		err := o.gha.SetOutput(kv[0], kv[1])
		if err == nil {
			continue
		}
		cause := err.Error()
		if _, seen := names[cause]; !seen {
			causes, errs[cause] = append(causes, cause), err
		}
		names[cause] = append(names[cause], kv[0])
	}
	for _, cause := range causes {
		o.record(fmt.Sprintf("$GITHUB_OUTPUT (%s)", strings.Join(names[cause], ", ")), errs[cause])
	}
}

// SetStepOutput sets one step output for a command that writes no other
// output (plan --github-matrix): one that cannot be written is an Error,
// as every output's is.
func SetStepOutput(gha *actions.Actions, name, value string) error {
	if err := gha.SetOutput(name, value); err != nil {
		return Error{fails: []failure{{output: fmt.Sprintf("$GITHUB_OUTPUT (%s)", name), err: err}}}
	}
	return nil
}

// AppendToSummary adds markdown (notes about publishing) to the end of
// the summary once its last version is written, through atomicfile, so
// another name of the file keeps what it had. No summary, or one that is
// a stream, gets nothing: a stream was written once and closed, and
// opening it again could block.
func (o *Outputs) AppendToSummary(markdown string) error {
	if o.summaryPath == "" || o.streams[o.summaryPath] || markdown == "" {
		return nil
	}
	if err := atomicfile.Append(o.summaryPath, []byte(markdown)); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}

// Error lists every output that could not be written: one line each, then
// a line that says what it means for the run.
type Error struct {
	fails  []failure
	ending string // what it meant, e.g. "no build was started"; "" at the end of a run
}

func (e Error) Error() string {
	var b strings.Builder
	names := make([]string, len(e.fails))
	for i, f := range e.fails {
		names[i] = f.output
		fmt.Fprintf(&b, "trt-action: %s: %v\n", f.output, f.err)
	}
	fmt.Fprintf(&b, "trt-action: %s could not be written (%s)", text.Count(len(e.fails), "output"), strings.Join(names, ", "))
	if e.ending != "" {
		b.WriteString(": " + e.ending)
	}
	return b.String()
}

// writeJUnit writes the JUnit file, whole or not at all, like the report:
// a cancel never leaves a truncated file where a good one was. Each test
// case goes to the partial file as it is encoded (about 230 bytes a build),
// so the document is never held in memory.
func writeJUnit(path string, r *report.Report) error {
	return atomicfile.WriteFrom(path, func(w io.Writer) error {
		buf := bufio.NewWriterSize(w, 64<<10)
		if err := report.WriteJUnit(buf, r); err != nil {
			return err
		}
		return buf.Flush()
	})
}

// engineMap is the engines output: build name to engine path. A script
// build that declared several engines has its first under its name and
// the others under NAME#2, NAME#3, ... in the order declared ('#' is in
// no build name).
func engineMap(r *report.Report) string {
	m := map[string]string{}
	for _, b := range r.Builds {
		for i, e := range report.EngineFiles(&b) {
			key := b.Name
			if i > 0 {
				key = fmt.Sprintf("%s#%d", b.Name, i+1)
			}
			m[key] = e.Path
		}
	}
	data, _ := json.Marshal(m)
	return string(data)
}

// countOK counts the builds that succeeded: built, or taken from the
// engine cache.
func countOK(r *report.Report) int {
	n := 0
	for _, b := range r.Builds {
		if report.Succeeded(b.Status) {
			n++
		}
	}
	return n
}

// countStored counts the builds whose engine this run put in the engine
// cache: a workflow saves the cache folder only when it is not 0.
func countStored(r *report.Report) int {
	n := 0
	for _, b := range r.Builds {
		if b.Cache != nil && b.Cache.Stored {
			n++
		}
	}
	return n
}

// countCached counts the builds whose engine came from the engine cache.
func countCached(r *report.Report) int {
	n := 0
	for _, b := range r.Builds {
		if b.Status == report.StatusCached {
			n++
		}
	}
	return n
}
