// Package jsonl writes a running build matrix as JSON Lines, one object per
// line as things happen, for tools that follow a run live (IDE plugins,
// dashboards, agents). docs/events.md describes the format.
package jsonl

import (
	"bytes"
	"encoding/json"
	"io"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

// version is the "v" field of every line. It is bumped when a line changes
// in a way a reader could trip over (a field removed, renamed or given a
// new meaning); new fields and new types do not bump it.
const version = 1

// heartbeatEvery is the shortest time between two heartbeat lines of one
// build; the supervisor may send heartbeats more often for the terminal.
const heartbeatEvery = time.Second

// Options configure the stream.
type Options struct {
	// Depth limits phase_started and phase_finished lines to phases at most
	// this many levels deep (1: root phases only). 0 or less: no limit.
	Depth int
}

// stream writes one line per event worth telling. One goroutine calls it.
type stream struct {
	w        io.Writer
	opts     Options
	lastBeat map[int]time.Duration // per build: when its last heartbeat line was written
	// lastTransfer is, per build and direction, when its transfer's last
	// cache_transfer line was written; absent before its first.
	lastTransfer map[transferOf]time.Duration
	output       map[int]int // per script build: the lines its command printed
	buf          bytes.Buffer
	enc          *json.Encoder
	err          error
}

// flusher is a buffered writer (bufio.Writer) the stream must flush after
// each line so a tool following the file sees it at once.
type flusher interface{ Flush() error }

// New returns the view that writes the event stream to w.
func New(w io.Writer, opts Options) event.View {
	s := &stream{w: w, opts: opts, lastBeat: map[int]time.Duration{}, output: map[int]int{}, lastTransfer: map[transferOf]time.Duration{}}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false) // names with < or & stay readable
	return s
}

// Handle writes the line for ev, if it has one.
func (s *stream) Handle(ev event.Event) {
	if line := s.line(ev); line != nil {
		s.write(line)
	}
}

// Close reports the first write error; every line was flushed already.
func (s *stream) Close() error { return s.err }

// header is the start of every line.
type header struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	TMs  int64  `json:"t_ms"` // since the run started
}

// build identifies the build a line is about.
type build struct {
	Build int    `json:"build"` // index in the matrix, from 0
	Name  string `json:"name"`
}

type phase struct {
	Name      string `json:"name"`
	Done      int    `json:"steps_done"`
	Steps     int    `json:"steps"`
	ElapsedMs int64  `json:"elapsed_ms"`
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// line builds the JSON object for ev, or nil for events the stream skips
// (phases below Depth, heartbeats within a second of the last).
func (s *stream) line(ev event.Event) any {
	h := func(typ string) header { return header{V: version, Type: typ, TMs: ms(ev.At)} }
	b := build{Build: ev.Build, Name: ev.Name}
	switch ev.Kind {
	case event.RunStarted:
		return struct {
			header
			Builds int `json:"builds"`
		}{h("run_started"), ev.Total}
	case event.BuildStarted:
		return struct {
			header
			build
		}{h("build_started"), b}
	case event.PhaseStarted:
		if !s.deepEnough(ev.Path) {
			return nil
		}
		return struct {
			header
			build
			Inner int      `json:"tensorrt_build,omitempty"`
			Path  []string `json:"path"`
			Steps int      `json:"steps"`
		}{h("phase_started"), b, ev.Inner, ev.Path, ev.Steps}
	case event.PhaseFinished:
		if !s.deepEnough(ev.Path) {
			return nil
		}
		return struct {
			header
			build
			Inner      int      `json:"tensorrt_build,omitempty"`
			Path       []string `json:"path"`
			Done       int      `json:"steps_done"`
			Steps      int      `json:"steps"`
			DurationMs int64    `json:"duration_ms"`
		}{h("phase_finished"), b, ev.Inner, ev.Path, ev.Done, ev.Steps, ms(ev.Elapsed)}
	case event.Output:
		return s.outputLine(ev, h("output"), b)
	case event.InnerStarted:
		return struct {
			header
			build
			Inner   int    `json:"tensorrt_build"`
			Message string `json:"message"`
		}{h("tensorrt_build_started"), b, ev.Inner, ev.Message}
	case event.InnerFinished:
		return innerFinished(h("tensorrt_build_finished"), b, ev.Inner, ev.InnerResult)
	case event.Heartbeat:
		return s.heartbeat(ev, h("heartbeat"), b)
	case event.BudgetWarning:
		return struct {
			header
			build
			Message string `json:"message"`
		}{h("budget_warning"), b, ev.Message}
	case event.LibraryLog:
		return struct {
			header
			build
			Severity string `json:"severity"`
			Message  string `json:"message"`
		}{h("library_log"), b, ev.Severity, ev.Message}
	case event.Warning:
		return message{h("warning"), ev.Build, ev.Name, ev.Message}
	case event.Stopping:
		return message{h("stopping"), ev.Build, ev.Name, ev.Message}
	case event.CacheTransfer:
		return s.transfer(ev, h("cache_transfer"), b)
	case event.CachePushed:
		return cachePushed(h("cache_pushed"), b, ev.Result)
	case event.BuildFinished:
		return buildFinished(h("build_finished"), b, ev.Result, s.output[ev.Build])
	case event.RunFinished:
		return runFinished(h("run_finished"), ev.Run)
	}
	return nil
}

func (s *stream) deepEnough(path []string) bool {
	return s.opts.Depth <= 0 || len(path) <= s.opts.Depth
}

// outputLine is a line the build's command printed, for the first
// report.LiveOutputLines of them, each cut to report.OutputLineRunes, as
// the log views show them: with --events - the stream is the log. The
// build_finished line says how many there were in all.
func (s *stream) outputLine(ev event.Event, h header, b build) any {
	s.output[ev.Build]++
	if s.output[ev.Build] > report.LiveOutputLines {
		return nil
	}
	return struct {
		header
		build
		Line string `json:"line"`
	}{h, b, report.OutputLine(ev.Message)}
}

// innerFinished is the end of TensorRT build k of a script build: what the
// report says of it, without its phases and settings.
func innerFinished(h header, b build, k int, t *report.TensorRTBuild) any {
	type line struct {
		header
		build
		Inner           int    `json:"tensorrt_build"`
		Status          string `json:"status"`
		Reason          string `json:"reason,omitempty"`
		StartMs         int64  `json:"start_ms"`
		DurationMs      int64  `json:"duration_ms"`
		PID             int    `json:"pid,omitempty"`
		Entry           string `json:"entry,omitempty"`
		Route           string `json:"route,omitempty"`
		SerializedBytes int64  `json:"serialized_bytes,omitempty"`
		// Memory is its process's while it ran, as the report has it.
		Memory *report.Memory `json:"memory,omitempty"`
	}
	if t == nil {
		return line{header: h, build: b, Inner: k, Status: report.StatusFailed}
	}
	return line{header: h, build: b, Inner: k, Status: t.Status, Reason: t.Reason, StartMs: t.StartMs,
		DurationMs: t.DurationMs, PID: t.PID, Entry: t.Entry, Route: t.Route, SerializedBytes: t.SerializedBytes, Memory: t.Memory}
}

// heartbeat writes at most one line a second per build: a tool wants to
// know the build is alive and where it is, not every redraw's worth.
func (s *stream) heartbeat(ev event.Event, h header, b build) any {
	if ev.Progress == nil {
		return nil
	}
	if last, ok := s.lastBeat[ev.Build]; ok && ev.At-last < heartbeatEvery {
		return nil
	}
	s.lastBeat[ev.Build] = ev.At
	p := ev.Progress
	active := make([]phase, len(p.Active))
	for i, a := range p.Active {
		active[i] = phase{Name: a.Name, Done: a.Done, Steps: a.Steps, ElapsedMs: ms(a.Elapsed)}
	}
	var left *int64
	if p.BudgetLeft >= 0 {
		v := ms(p.BudgetLeft)
		left = &v
	}
	return struct {
		header
		build
		ElapsedMs    int64   `json:"elapsed_ms"`
		BudgetLeftMs *int64  `json:"budget_left_ms"` // null: no limit applies
		Budget       string  `json:"budget,omitempty"`
		Callbacks    int64   `json:"callbacks"`
		SilentMs     int64   `json:"silent_ms"`
		Active       []phase `json:"active"`
		// A script build's: the TensorRT build active is of, and how many
		// run and ended.
		Inner        int `json:"tensorrt_build,omitempty"`
		InnerRunning int `json:"tensorrt_builds_running,omitempty"`
		InnerDone    int `json:"tensorrt_builds_done,omitempty"`
		// What the build's processes hold; absent before the first look.
		Memory *memoryNow `json:"memory,omitempty"`
	}{h, b, ms(p.Elapsed), left, p.BudgetName, p.Callbacks, ms(p.Silent), active, p.Inner, p.InnerRunning, p.InnerDone, memoryOf(p.Memory)}
}

// memoryNow is a running build's memory: now and its peak so far, host
// and (where measured) GPU, in bytes.
type memoryNow struct {
	HostBytes     int64  `json:"host_bytes"`
	PeakHostBytes int64  `json:"peak_host_bytes"`
	GPUBytes      *int64 `json:"gpu_bytes,omitempty"`
	PeakGPUBytes  *int64 `json:"peak_gpu_bytes,omitempty"`
}

func memoryOf(m *event.MemoryUse) *memoryNow {
	if m == nil {
		return nil
	}
	out := &memoryNow{HostBytes: m.Host, PeakHostBytes: m.PeakHost}
	if m.HasGPU {
		gpu, peak := m.GPU, m.PeakGPU
		out.GPUBytes, out.PeakGPUBytes = &gpu, &peak
	}
	return out
}

// transferOf names one build's transfer in one direction.
type transferOf struct {
	build     int
	direction string
}

// transfer is a cache_transfer line: a transfer's first and last always,
// and between them at most one a second (the tier tells a few a second).
func (s *stream) transfer(ev event.Event, h header, b build) any {
	t := ev.Transfer
	if t == nil {
		return nil
	}
	of := transferOf{ev.Build, t.Direction}
	last, begun := s.lastTransfer[of]
	switch {
	case t.Ended:
		delete(s.lastTransfer, of) // a later transfer is a new one
	case begun && ev.At-last < heartbeatEvery:
		return nil
	default:
		s.lastTransfer[of] = ev.At
	}
	var total *int64
	if t.Total > 0 {
		total = &t.Total
	}
	return struct {
		header
		build
		Direction string `json:"direction"`
		Bytes     int64  `json:"bytes"`
		Total     *int64 `json:"total"` // null: not known
		ElapsedMs int64  `json:"elapsed_ms"`
		Ended     bool   `json:"ended"`
		Error     string `json:"error,omitempty"` // why it stopped short (the store's or the client's words)
	}{h, b, t.Direction, t.Bytes, total, ms(t.Elapsed), t.Ended, t.Err}
}

// cachePushed is the end of a push that outlived its build: whether the
// entry went into the store, and the build's cache object as it is now.
func cachePushed(h header, b build, r *report.Build) any {
	type line struct {
		header
		build
		Pushed bool   `json:"pushed"`
		Cache  *cache `json:"cache,omitempty"`
	}
	l := line{header: h, build: b}
	if r != nil && r.Cache != nil {
		l.Pushed, l.Cache = r.Cache.Pushed, cacheOf(r.Cache)
	}
	return l
}

// message is a line that says something about one build or, with build
// -1, the whole run: stopping, warning.
type message struct {
	header
	Build   int    `json:"build"` // -1: the whole run
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

type engine struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// buildFinished is a build's end; output is how many lines a script
// build's command printed.
func buildFinished(h header, b build, r *report.Build, output int) any {
	type line struct {
		header
		build
		Status     string   `json:"status"`
		Reason     string   `json:"reason,omitempty"`
		DurationMs int64    `json:"duration_ms"`
		Engine     *engine  `json:"engine,omitempty"`
		Engines    []engine `json:"engines,omitempty"` // a script build's declared engine files
		Outputs    []engine `json:"outputs,omitempty"` // a script build's other declared files (outputs:)
		Cache      *cache   `json:"cache,omitempty"`
		Script     *script  `json:"script,omitempty"`
		// Memory is what the build's processes held, as the report has it;
		// Budget the limit that stopped it (a memory budget's with its
		// limit_bytes and peak_bytes).
		Memory *report.Memory    `json:"memory,omitempty"`
		Budget *report.BudgetHit `json:"budget,omitempty"`
	}
	if r == nil {
		return line{header: h, build: b, Status: report.StatusFailed}
	}
	if b.Name == "" {
		b.Name = r.Name
	}
	l := line{header: h, build: b, Status: r.Status, Reason: r.Reason, DurationMs: r.DurationMs, Memory: r.Memory, Budget: r.Budget}
	if r.Engine != nil {
		l.Engine = &engine{Path: r.Engine.Path, Bytes: r.Engine.Bytes, SHA256: r.Engine.SHA256}
	}
	for _, e := range r.Engines {
		l.Engines = append(l.Engines, engine{Path: e.Path, Bytes: e.Bytes, SHA256: e.SHA256})
	}
	for _, e := range r.Outputs {
		l.Outputs = append(l.Outputs, engine{Path: e.Path, Bytes: e.Bytes, SHA256: e.SHA256})
	}
	if sc := r.Script; sc != nil {
		l.Script = &script{ExitCode: sc.ExitCode, Exit: sc.Exit, TensorRTBuilds: len(r.TensorRTBuilds),
			Unobserved: sc.Unobserved, OutputLines: output}
	}
	if r.Cache != nil {
		l.Cache = cacheOf(r.Cache)
	}
	return l
}

// cacheOf is the report's cache object as the stream gives it.
func cacheOf(c *report.CacheUse) *cache {
	out := &cache{Key: c.Key, Hit: c.Hit, From: c.From, Stored: c.Stored, Pushed: c.Pushed, Rebuilt: c.Rebuilt, Replaced: c.Replaced,
		NotStored: c.NotStored, BuildMs: c.BuildMs}
	if !c.BuiltAt.IsZero() {
		out.BuiltAt = c.BuiltAt.UTC().Format(time.RFC3339)
	}
	if t := c.Transfer; t != nil {
		out.Transfer = &report.CacheTransfer{Direction: t.Direction, Bytes: t.Bytes, Ms: t.Ms}
	}
	return out
}

// script is how a script build's command ran (the report's script object
// without its output tail, and the number of TensorRT builds it ran).
type script struct {
	ExitCode       *int   `json:"exit_code"` // null: a signal ended it, or it never started
	Exit           string `json:"exit"`
	TensorRTBuilds int    `json:"tensorrt_builds"`
	Unobserved     string `json:"unobserved,omitempty"`
	OutputLines    int    `json:"output_lines"` // lines it printed; output lines stop after the first 1,000
}

// cache is what the engine cache did for a build (the report's cache
// object without the original build's phase tree).
type cache struct {
	Key      string `json:"key,omitempty"`
	Hit      bool   `json:"hit"`
	From     string `json:"from,omitempty"` // a hit: "local" (the cache folder) or "remote" (the shared store)
	Stored   bool   `json:"stored,omitempty"`
	Pushed   bool   `json:"pushed,omitempty"`   // this run put the entry in the shared store
	Rebuilt  bool   `json:"rebuilt,omitempty"`  // --rebuild: built without asking the cache
	Replaced bool   `json:"replaced,omitempty"` // its engine replaced the entry that was there
	// NotStored says why an ok build with run: was not stored (a
	// declared file not written during the run).
	NotStored string `json:"not_stored,omitempty"`
	BuiltAt   string `json:"built_at,omitempty"`
	BuildMs   int64  `json:"build_ms,omitempty"`
	// Transfer is what moved between the build and the shared store: a
	// remote hit's pull, else its push (so far, on build_finished).
	Transfer *report.CacheTransfer `json:"transfer,omitempty"`
}

func runFinished(h header, run *report.Report) any {
	type line struct {
		header
		DurationMs  int64          `json:"duration_ms"`
		Complete    bool           `json:"complete"`
		Interrupted string         `json:"interrupted,omitempty"`
		Ended       string         `json:"ended,omitempty"`       // why a run over without a signal left builds out
		Regressions []string       `json:"regressions,omitempty"` // builds over the regression fail threshold ("name", or "name #2" for a TensorRT build in it)
		Builds      int            `json:"builds"`
		Statuses    map[string]int `json:"statuses"` // builds per status
		// Cache is the run's shared store: its URL (never with
		// credentials), mode, why that mode, and what went wrong with it.
		Cache *report.RunCache `json:"cache,omitempty"`
	}
	l := line{header: h, Statuses: map[string]int{}}
	if run != nil {
		l.DurationMs, l.Complete, l.Interrupted, l.Builds = run.DurationMs, run.Complete, run.Interrupted, len(run.Builds)
		l.Ended, l.Cache = run.Ended, run.Cache
		for _, g := range run.Regressions {
			l.Regressions = append(l.Regressions, g.Label())
		}
		for _, b := range run.Builds {
			l.Statuses[b.Status]++
		}
	}
	return l
}

// write puts one whole line on w in a single Write, so a reader never sees
// half a line, and flushes a buffered w at once.
func (s *stream) write(v any) {
	if s.err != nil {
		return
	}
	s.buf.Reset()
	if err := s.enc.Encode(v); err != nil { // Encode ends the line with \n
		s.err = err
		return
	}
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		s.err = err
		return
	}
	if f, ok := s.w.(flusher); ok {
		s.err = f.Flush()
	}
}
