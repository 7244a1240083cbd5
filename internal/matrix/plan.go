package matrix

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/text"
)

// PlanText writes builds as a table: name, backend, engine, budgets, axes;
// then the command of each build with run: (planCommands).
func PlanText(w io.Writer, builds []Build) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBACKEND\tENGINE\tBUDGETS\tAXES")
	for _, b := range builds {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n",
			text.Escaped(b.Name), b.Backend, text.Escaped(enginesText(b)), budgetsText(b.Budgets), text.Escaped(axesText(b.Axes)))
	}
	tw.Flush()
	fmt.Fprintln(w, text.Count(len(builds), "build"))
	planCommands(w, builds)
}

// enginesText is a build's engine, or the engines its command writes
// ("-": none).
func enginesText(b Build) string {
	if b.Script == nil {
		return b.Engine
	}
	if len(b.Script.Engines) == 0 {
		return "-"
	}
	return strings.Join(b.Script.Engines, ", ")
}

// planCommands writes, for each build with run:, its command as a line a
// shell runs as it (text.ShellLine), the folder it starts in, the names
// of the variables its env: sets, and what it declares for the engine
// cache (its inputs: patterns and outputs:). The variables' values are
// left out: the matrix file has them, and a plan goes into logs, where a
// value that is a token does not belong.
func planCommands(w io.Writer, builds []Build) {
	first := true
	for _, b := range builds {
		if b.Script == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\ncommands (builds with run:, cached only with inputs:):")
			first = false
		}
		fmt.Fprintf(w, "%s: %s\n  workdir: %s\n", text.Escaped(b.Name), text.Escaped(text.ShellLine(b.Script.Argv)), text.Escaped(b.Script.Workdir))
		if names := b.Script.EnvNames(); len(names) > 0 {
			fmt.Fprintf(w, "  env: %s\n", text.Escaped(strings.Join(names, ", ")))
		}
		if len(b.Script.Inputs) > 0 {
			fmt.Fprintf(w, "  inputs: %s\n", text.Escaped(strings.Join(b.Script.Inputs, ", ")))
		}
		if len(b.Script.Outputs) > 0 {
			fmt.Fprintf(w, "  outputs: %s\n", text.Escaped(strings.Join(b.Script.Outputs, ", ")))
		}
	}
}

// budgetsText summarises budgets in one cell: "build 15m stall 2m phases 2 warn 80%".
func budgetsText(b Budgets) string {
	var parts []string
	if b.Build > 0 {
		parts = append(parts, "build "+shortDuration(b.Build))
	}
	if b.Stall > 0 {
		parts = append(parts, "stall "+shortDuration(b.Stall))
	}
	if n := len(b.Phases); n > 0 {
		parts = append(parts, "phases "+strconv.Itoa(n))
	}
	if b.Memory > 0 {
		parts = append(parts, "memory "+text.ExactSize(b.Memory))
	}
	if b.GPUMemory > 0 {
		parts = append(parts, "gpu-memory "+text.ExactSize(b.GPUMemory))
	}
	if b.WarnPercent > 0 {
		parts = append(parts, "warn "+strconv.FormatFloat(b.WarnPercent, 'g', -1, 64)+"%")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// shortDuration drops Go's zero units: 15m0s -> 15m, 1h0m0s -> 1h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// axesText renders a combination as "batch=8 precision=fp16", keys sorted.
func axesText(axes map[string]string) string {
	if len(axes) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(axes))
	for k := range axes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + axes[k]
	}
	return strings.Join(parts, " ")
}

// planBuild is the JSON form of a Build. Durations are Go duration strings
// ("15m0s"); zero limits are omitted. Every builder setting is under
// settings, by its matrix key, as the report and the cache key hold it.
type planBuild struct {
	Name     string            `json:"name"`
	Backend  string            `json:"backend"`
	ONNX     string            `json:"onnx,omitempty"`
	Engine   string            `json:"engine"`
	Script   *planScript       `json:"script,omitempty"`   // a build with run:
	Settings map[string]any    `json:"settings,omitempty"` // keyed by matrix key
	Budgets  planBudgets       `json:"budgets"`
	Sim      *planSim          `json:"sim,omitempty"`
	Axes     map[string]string `json:"axes,omitempty"`
	Pos      string            `json:"pos"`
	// CacheKey is the engine cache key (a JSON string), or null with
	// CacheKeyUnknown saying why; absent when keys were not asked for.
	CacheKey        json.RawMessage `json:"cache_key,omitempty"`
	CacheKeyUnknown string          `json:"cache_key_unknown,omitempty"`
	// CacheRemote is the shared store the key is looked up in (the
	// matrix's cache.remote, without credentials); absent without one.
	CacheRemote string `json:"cache_remote,omitempty"`
}

// planScript is what a build with run: runs: its command's words, where,
// the names of the variables its env: sets (not their values: see
// planCommands), the engines and other files it writes, and the patterns
// of its inputs.
type planScript struct {
	Run     []string `json:"run"`
	Workdir string   `json:"workdir"`
	Env     []string `json:"env,omitempty"`
	Engines []string `json:"engines,omitempty"`
	Outputs []string `json:"outputs,omitempty"`
	Inputs  []string `json:"inputs,omitempty"`
}

type planBudgets struct {
	Build  string      `json:"build,omitempty"`
	Stall  string      `json:"stall,omitempty"`
	Phases []planPhase `json:"phases,omitempty"`
	Warn   float64     `json:"warn_percent,omitempty"`
	Grace  string      `json:"grace"`
	// Memory and GPUMemory are sizes as a matrix file writes them ("8GiB").
	Memory    string `json:"memory,omitempty"`
	GPUMemory string `json:"gpu_memory,omitempty"`
}

type planPhase struct {
	Pattern string `json:"pattern"`
	Limit   string `json:"limit"`
}

type planSim struct {
	Trace         string `json:"trace,omitempty"`
	Step          string `json:"step"`
	Fast          bool   `json:"fast,omitempty"`   // step: 0s
	Repeat        int    `json:"repeat,omitempty"` // when above 1
	Threads       int    `json:"threads"`
	Fault         string `json:"fault"`
	FaultDuration string `json:"fault_duration,omitempty"`
	EngineSize    int64  `json:"engine_size,omitempty"` // bytes; 0: the small engine
	Allocate      int64  `json:"allocate,omitempty"`    // bytes; 0: none
}

// PlanKeys gives a build's engine cache key, or why it is unknown
// (internal/cache computes it; matrix cannot import it).
type PlanKeys func(Build) (key, unknown string)

// PlanJSON writes builds as a JSON array, one build per line, whose field
// order is fixed and whose maps have sorted keys, so equal plans give equal
// bytes and plans diff line by line. With keys, each build also has its
// engine cache key (null, with the reason, when it is unknown) and, with a
// remote (the store's URL, which PlanJSON redacts), the shared store it is
// looked up in.
func PlanJSON(w io.Writer, builds []Build, keys PlanKeys, remoteURL string) error {
	var one bytes.Buffer
	enc := json.NewEncoder(&one)
	enc.SetEscapeHTML(false) // paths may hold & or <
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	for i, b := range builds {
		one.Reset()
		p := toPlan(b)
		if keys != nil {
			p.CacheKey, p.CacheKeyUnknown = planKey(keys(b))
			if remoteURL != "" && (b.Script == nil || b.Script.Cached()) {
				p.CacheRemote = remote.Redact(remoteURL)
			}
		}
		if err := enc.Encode(p); err != nil {
			return err
		}
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
		bw.Write(bytes.TrimSuffix(one.Bytes(), []byte("\n")))
	}
	if len(builds) > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

func toPlan(b Build) planBuild {
	p := planBuild{
		Name: b.Name, Backend: b.Backend, ONNX: b.ONNX, Engine: b.Engine, Settings: b.BuilderSettings(),
		Budgets: planBudgets{
			Build: durationOrEmpty(b.Budgets.Build), Stall: durationOrEmpty(b.Budgets.Stall),
			Warn: b.Budgets.WarnPercent, Grace: b.Budgets.Grace.String(),
			Memory: sizeOrEmpty(b.Budgets.Memory), GPUMemory: sizeOrEmpty(b.Budgets.GPUMemory),
		},
		Axes: b.Axes, Pos: b.Pos.String(),
	}
	for _, ph := range b.Budgets.Phases {
		p.Budgets.Phases = append(p.Budgets.Phases, planPhase{Pattern: ph.Pattern, Limit: ph.Limit.String()})
	}
	if s := b.Script; s != nil {
		p.Script = &planScript{Run: s.Argv, Workdir: s.Workdir, Env: s.EnvNames(), Engines: s.Engines, Outputs: s.Outputs, Inputs: s.Inputs}
	}
	if backend.Of(b.Backend).Simulated {
		p.Sim = &planSim{
			Trace: b.Sim.Trace, Step: b.Sim.Step.String(), Fast: b.Sim.Fast, Threads: b.Sim.Threads,
			Fault: b.Sim.Fault.Kind, FaultDuration: durationOrEmpty(b.Sim.Fault.Duration),
			EngineSize: b.Sim.EngineSize, Allocate: b.Sim.Allocate,
		}
		if b.Sim.Repeat > 1 {
			p.Sim.Repeat = b.Sim.Repeat
		}
	}
	return p
}

// sizeOrEmpty is a size as a matrix file writes it, "" for none.
func sizeOrEmpty(n int64) string {
	if n <= 0 {
		return ""
	}
	return text.ExactSize(n)
}

// planKey is a key as JSON: a string, or null beside the reason.
func planKey(key, unknown string) (json.RawMessage, string) {
	if key == "" {
		return json.RawMessage("null"), unknown
	}
	quoted, _ := json.Marshal(key)
	return quoted, ""
}

func durationOrEmpty(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}
