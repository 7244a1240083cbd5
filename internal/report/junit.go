package report

import (
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/text"
)

// JUnit XML is the lingua franca of test-report tools: writing builds as test
// cases lets CI systems that know nothing about TensorRT show them.

type junitCase struct {
	Name       string           `xml:"name,attr"`
	Classname  string           `xml:"classname,attr"`
	Time       string           `xml:"time,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Failure    *junitProblem    `xml:"failure,omitempty"`
	Skipped    *junitProblem    `xml:"skipped,omitempty"`
	SystemOut  string           `xml:"system-out,omitempty"`
}

// junitProperties are name-value pairs of a test suite or case (the
// form JUnit's own reports and pytest's record_property write), for what a
// tool may want to count: the shared cache store's use.
type junitProperties struct {
	XMLName  xml.Name        `xml:"properties"`
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// properties is a list of pairs as junitProperties, nil for none.
func properties(pairs ...string) *junitProperties {
	if len(pairs) == 0 {
		return nil
	}
	p := &junitProperties{}
	for i := 0; i+1 < len(pairs); i += 2 {
		p.Property = append(p.Property, junitProperty{Name: "trt-action." + pairs[i], Value: text.Plain(pairs[i+1])})
	}
	return p
}

// runProperties are the test suite's: the run's shared store (its URL
// without credentials, its mode, and why that mode).
func runProperties(c *RunCache) *junitProperties {
	if c == nil {
		return nil
	}
	pairs := []string{"cache.remote", c.Remote, "cache.remote_mode", c.RemoteMode}
	if c.ModeNote != "" {
		pairs = append(pairs, "cache.remote_mode_note", c.ModeNote)
	}
	return properties(pairs...)
}

// buildProperties are a test case's: its memory figures (memoryPairs),
// and in a run with a shared store (store) what the build did with it
// (where a hit came from, whether it pushed, what moved); nil for none.
func buildProperties(b *Build, store bool) *junitProperties {
	pairs := memoryPairs(b.Memory)
	c := b.Cache
	if !store || c == nil || c.Key == "" {
		return properties(pairs...)
	}
	if c.From != "" {
		pairs = append(pairs, "cache.from", c.From)
	}
	pairs = append(pairs, "cache.pushed", strconv.FormatBool(c.Pushed))
	if t := c.Transfer; t != nil {
		pairs = append(pairs, "cache."+t.Direction+"_bytes", strconv.FormatInt(t.Bytes, 10), "cache."+t.Direction+"_ms", strconv.FormatInt(t.Ms, 10))
	}
	return properties(pairs...)
}

// memoryPairs are a build's memory figures as properties, in bytes, each
// only where measured (docs/reports.md): trt-action.memory.peak_host_bytes
// and the rest, named as the JSON report names them.
func memoryPairs(m *Memory) []string {
	if m == nil {
		return nil
	}
	var pairs []string
	add := func(name string, n int64) {
		if n > 0 {
			pairs = append(pairs, "memory."+name, strconv.FormatInt(n, 10))
		}
	}
	add("peak_host_bytes", m.PeakHostBytes)
	if m.HostSource != "" {
		pairs = append(pairs, "memory.host_source", m.HostSource)
	}
	add("peak_gpu_bytes", m.PeakGPUBytes)
	if m.GPUSource != "" {
		pairs = append(pairs, "memory.gpu_source", m.GPUSource)
	}
	add("largest_process_bytes", m.LargestProcessBytes)
	add("cgroup_peak_bytes", m.CgroupPeakBytes)
	add("oom_kills", m.OOMKills)
	add("host_limit_bytes", m.HostLimitBytes)
	add("tensorrt_cpu_bytes", m.TensorRTCPUBytes)
	add("tensorrt_gpu_bytes", m.TensorRTGPUBytes)
	add("tensorrt_allocator_cpu_bytes", m.TensorRTAllocatorCPUBytes)
	add("tensorrt_allocator_gpu_bytes", m.TensorRTAllocatorGPUBytes)
	return pairs
}

type junitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes r as JUnit XML: one test case per build (class name
// "trt-action.<backend>", time in seconds), a failure for failed,
// budget-exceeded, crashed and killed builds (message = reason, type =
// status) and for builds left pending or running, and skipped for
// cancelled ones. It streams: the counts come first, from the builds'
// statuses, and then each test case is made and encoded in turn, so a run
// of thousands of builds never holds its JUnit document in memory.
func WriteJUnit(w io.Writer, r *Report) error {
	tests, failures, skipped := len(r.Builds), 0, 0
	for i := range r.Builds {
		switch junitKind(r.Builds[i].Status) {
		case junitFailure:
			failures++
		case junitSkipped:
			skipped++
		}
	}
	name, seconds := junitSuiteName(r), junitSeconds(r.DurationMs)
	counts := func(local string) xml.StartElement {
		return xml.StartElement{Name: xml.Name{Local: local}, Attr: []xml.Attr{
			{Name: xml.Name{Local: "name"}, Value: name},
			{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(tests)},
			{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(failures)},
			{Name: xml.Name{Local: "errors"}, Value: "0"},
			{Name: xml.Name{Local: "skipped"}, Value: strconv.Itoa(skipped)},
			{Name: xml.Name{Local: "time"}, Value: seconds},
		}}
	}
	suites, suite := counts("testsuites"), counts("testsuite")
	if !r.StartedAt.IsZero() {
		suite.Attr = append(suite.Attr, xml.Attr{Name: xml.Name{Local: "timestamp"}, Value: r.StartedAt.UTC().Format(time.RFC3339)})
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := errors.Join(enc.EncodeToken(suites), enc.EncodeToken(suite)); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	if p := runProperties(r.Cache); p != nil {
		if err := enc.Encode(p); err != nil {
			return fmt.Errorf("junit: %w", err)
		}
	}
	testcase := xml.StartElement{Name: xml.Name{Local: "testcase"}}
	for i := range r.Builds {
		if err := enc.EncodeElement(junitTestCase(junitBuild(&r.Builds[i]), r.Cache != nil), testcase); err != nil {
			return fmt.Errorf("junit: %w", err)
		}
	}
	if err := errors.Join(enc.EncodeToken(suite.End()), enc.EncodeToken(suites.End()), enc.Flush()); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitBuild is b as its test case needs it: a settled script build read
// back whole, for all its lines of output (one build at a time, so a
// matrix's never are all in memory); else b. When reading back fails the
// test case has the lines the settled build kept.
func junitBuild(b *Build) *Build {
	if b.Script == nil || b.digest == nil {
		return b
	}
	whole, err := b.digest.whole()
	if err != nil {
		return b
	}
	return &whole
}

func junitSuiteName(r *Report) string {
	if r.Matrix == "" {
		return "trt-action"
	}
	return "trt-action " + text.Plain(r.Matrix)
}

// junitTestCase is b's test case, in a run with a shared store (store) or
// without.
func junitTestCase(b *Build, store bool) junitCase {
	c := junitCase{
		Name:       text.Plain(b.Name),
		Classname:  "trt-action." + text.Plain(b.Backend),
		Time:       junitSeconds(b.DurationMs),
		SystemOut:  text.PlainLines(junitSystemOut(b)),
		Properties: buildProperties(b, store),
	}
	switch junitKind(b.Status) {
	case junitFailure:
		c.Failure = &junitProblem{Message: junitMessage(b), Type: text.Plain(b.Status), Body: text.PlainLines(junitFailureBody(b))}
	case junitSkipped:
		c.Skipped = &junitProblem{Message: junitMessage(b)}
	}
	return c
}

// junitOutcome is what a build is as a JUnit test case.
type junitOutcome int

const (
	junitPassed junitOutcome = iota
	junitFailure
	junitSkipped
)

// junitKind is what a build of this status is as a test case, for the
// counts and the case alike: a success passes; a failed, budget-exceeded,
// crashed or killed build fails, and so does one still pending or running
// in a finished report (merge's missing shards, a killed shard's
// leftovers), which never produced its engine; a cancelled one is skipped.
func junitKind(status string) junitOutcome {
	switch status {
	case StatusFailed, StatusBudgetExceeded, StatusCrashed, StatusKilled, StatusPending, StatusRunning:
		return junitFailure
	}
	if Succeeded(status) {
		return junitPassed
	}
	return junitSkipped
}

func junitMessage(b *Build) string {
	if b.Reason != "" {
		return text.Plain(b.Reason)
	}
	return text.Plain(b.Status)
}

// junitFailureBody is the failure body: the budget that ran out and TensorRT's own
// error lines, which is what someone reading a red test wants first.
func junitFailureBody(b *Build) string {
	var sb strings.Builder
	if h := b.Budget; h != nil && IsMemoryBudget(h.Kind) {
		fmt.Fprintf(&sb, "%s budget: %s of %s\n", h.Kind, text.Bytes(h.PeakBytes), text.ExactSize(h.LimitBytes))
	} else if h != nil {
		fmt.Fprintf(&sb, "%s budget: %s of %s", h.Kind, text.PreciseMs(h.ElapsedMs), text.PreciseMs(h.LimitMs))
		if h.Phase != "" {
			fmt.Fprintf(&sb, " in %s", h.Phase)
		}
		sb.WriteString("\n")
	}
	for _, l := range b.Log {
		if l.Severity == SeverityError {
			sb.WriteString(l.Text)
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// junitSystemOut is the test case's standard output: the library, GPU and
// engines, for a script build its command and TensorRT builds, warnings,
// and the command's last lines of output, so nothing in the report is lost
// to JUnit readers.
func junitSystemOut(b *Build) string {
	var sb strings.Builder
	if note := CacheNote(b, time.Time{}); note != "" {
		// A passing test case: its time is the cache's, not a build's.
		fmt.Fprintf(&sb, "%s (engine from the engine cache, key %s)\n", note, b.Cache.Key)
	}
	if note := CacheStoreNote(b); note != "" {
		fmt.Fprintf(&sb, "%s (engine cache key %s)\n", note, b.Cache.Key)
	}
	if b.Library != "" {
		fmt.Fprintf(&sb, "library: %s\n", b.Library)
	}
	if b.GPU != "" {
		fmt.Fprintf(&sb, "gpu: %s\n", b.GPU)
	}
	junitScript(&sb, b)
	for _, e := range EngineFiles(b) {
		fmt.Fprintf(&sb, "engine: %s (%d bytes, sha256 %s)\n", e.Path, e.Bytes, e.SHA256)
	}
	for _, e := range b.Outputs {
		fmt.Fprintf(&sb, "output: %s (%d bytes, sha256 %s)\n", e.Path, e.Bytes, e.SHA256)
	}
	for _, w := range b.Warnings {
		fmt.Fprintf(&sb, "warning: %s\n", w)
	}
	if s := b.Script; s != nil && len(s.OutputTail) > 0 {
		fmt.Fprintf(&sb, "last %s of output:\n", text.Count(len(s.OutputTail), "line"))
		for _, l := range s.OutputTail {
			fmt.Fprintf(&sb, "  %s\n", l)
		}
	}
	return sb.String()
}

// junitScript is what a script build's test case says of its command and
// of each TensorRT build inside it.
func junitScript(sb *strings.Builder, b *Build) {
	s := b.Script
	if s == nil {
		return
	}
	fmt.Fprintf(sb, "command: %s\n", text.ShellLine(s.Command))
	fmt.Fprintf(sb, "exit: %s\n", cmp.Or(s.Exit, ExitText(s)))
	if s.Unobserved != "" {
		fmt.Fprintf(sb, "not observed: %s\n", s.Unobserved)
	}
	if len(b.TensorRTBuilds) == 0 {
		sb.WriteString(InnerCount(b) + "\n")
		return
	}
	sb.WriteString(InnerCount(b) + ":\n")
	for i := range b.TensorRTBuilds {
		sb.WriteString("  " + InnerText(&b.TensorRTBuilds[i]) + "\n")
	}
}

func junitSeconds(ms int64) string {
	return fmt.Sprintf("%.3f", float64(ms)/1000)
}
