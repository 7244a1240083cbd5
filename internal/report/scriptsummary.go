package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/settings"
	"github.com/trt-action/trt-action/internal/text"
)

// The job summary's section of a build that ran a command: how the command
// ran and each TensorRT build inside it, with its settings and phases, in
// the tables a matrix build's are shown in.

// Limits that keep script sections bounded: a program may run hundreds of
// TensorRT builds (one per rank, a sweep), and a matrix many scripts.
const (
	maxScriptSections = 20  // builds that ran a command, with a section each
	maxInnerRows      = 30  // TensorRT builds listed per section
	maxTensors        = 3   // network inputs and outputs named per TensorRT build
	maxSettingRunes   = 120 // of a settings cell
)

// scriptSections is a section per build that ran a command, each while it
// fits in room, and a note of those left out.
func (s *summary) scriptSections(room int) string {
	var b strings.Builder
	shown, left := 0, 0
	for i := range s.r.Builds {
		if s.r.Builds[i].Script == nil {
			continue
		}
		if shown == maxScriptSections {
			left++
			continue
		}
		sec := scriptSection(s.whole(i), s.opts.TopPhases)
		if b.Len()+len(sec) > room {
			left++
			continue
		}
		b.WriteString(sec)
		shown++
	}
	if left > 0 {
		fmt.Fprintf(&b, "\n_The TensorRT builds of %s that ran a command are left out to keep the summary short; see the JSON report._\n", text.Count(left, "more build"))
	}
	return b.String()
}

// scriptSection is one build's: the command and how it ended, then its
// TensorRT builds (or the warning that none was seen, and why), their
// settings and phases, its last lines of output when it succeeded (a build
// that did not has them in its problem section), and its engines.
func scriptSection(b *Build, topPhases int) string {
	sc := b.Script
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n### TensorRT builds in %s\n\n", text.Markdown(b.Name))
	facts := []string{"Command: " + text.Markdown(CommandText(sc))}
	if ended(b) { // how it ended in its own words ("exit status 1", "killed by signal SIGABRT")
		facts = append(facts, text.Markdown(cmp.Or(text.CutRunes(sc.Exit, 200), ExitText(sc))))
	}
	if sc.Workdir != "" {
		facts = append(facts, "in "+text.Markdown(sc.Workdir))
	}
	facts = append(facts, fmt.Sprintf("processes with trt-action's hook: %d", sc.Processes))
	if libs := innerLibraries(b.TensorRTBuilds); libs != "" {
		facts = append(facts, text.Markdown(libs))
	}
	sb.WriteString(strings.Join(facts, " · ") + "\n\n")
	if len(b.TensorRTBuilds) == 0 && !ended(b) {
		sb.WriteString("No TensorRT build has begun yet.\n\n")
	} else if len(b.TensorRTBuilds) == 0 {
		sb.WriteString("⚠️ No TensorRT build was seen in this command.")
		if sc.Unobserved != "" {
			sb.WriteString(" trt-action could not observe it: " + text.Markdown(text.CutRunes(sc.Unobserved, 1000)))
		}
		sb.WriteString("\n\n")
	} else {
		innerTable(&sb, b.TensorRTBuilds)
		innerReasons(&sb, b.TensorRTBuilds)
		shown := b.TensorRTBuilds[:min(len(b.TensorRTBuilds), maxTableCols)]
		innerSettings(&sb, shown)
		innerPhases(&sb, shown, len(b.TensorRTBuilds)-len(shown), topPhases)
	}
	if !failed(b) && len(sc.OutputTail) > 0 {
		sb.WriteString("<details><summary>Last lines of output</summary>\n\n")
		outputTail(&sb, sc.OutputTail)
		sb.WriteString("</details>\n\n")
	}
	for _, files := range []struct {
		title string
		list  []Engine
	}{{"Engines", EngineFiles(b)}, {"Outputs", b.Outputs}} {
		if len(files.list) == 0 {
			continue
		}
		sb.WriteString(files.title + ":\n\n")
		for _, e := range files.list {
			fmt.Fprintf(&sb, "- %s · %s\n", text.Markdown(e.Path), text.Bytes(e.Bytes))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// innerLibraries names the libraries the TensorRT builds used, once each.
func innerLibraries(inner []TensorRTBuild) string {
	var libs []string
	for i := range inner {
		if l := inner[i].Library; l != "" && !slices.Contains(libs, l) {
			libs = append(libs, l)
		}
	}
	return strings.Join(libs, ", ")
}

const innerHeader = "| # | Status | Started | Time | Size | Call | Network |\n|--:|---|--:|--:|--:|---|---|\n"

// innerMemoryHeader is innerHeader with the peak memory of each build's
// process, where any has one.
const innerMemoryHeader = "| # | Status | Started | Time | Peak memory | Size | Call | Network |\n|--:|---|--:|--:|--:|--:|---|---|\n"

// innerTable lists a script build's TensorRT builds, at most maxInnerRows.
func innerTable(sb *strings.Builder, inner []TensorRTBuild) {
	withMemory := slices.ContainsFunc(inner, func(t TensorRTBuild) bool { return t.Memory != nil })
	if withMemory {
		sb.WriteString(innerMemoryHeader)
	} else {
		sb.WriteString(innerHeader)
	}
	for i := range inner[:min(len(inner), maxInnerRows)] {
		t := &inner[i]
		size := "—"
		if t.SerializedBytes > 0 {
			size = text.Bytes(t.SerializedBytes)
		}
		if withMemory {
			size = cmp.Or(text.Markdown(MemoryText(t.Memory)), "—") + " | " + size
		}
		call := fmt.Sprintf("pid %d · %s · %s", t.PID, text.Markdown(t.Entry), text.Markdown(t.Route))
		fmt.Fprintf(sb, "| %d | %s | %s | %s | %s | %s | %s |\n", t.Index, statusLabel(t.Status),
			text.DurationMs(t.StartMs), text.DurationMs(t.DurationMs), size, call, text.Markdown(networkText(t.Network)))
	}
	if more := len(inner) - maxInnerRows; more > 0 {
		fmt.Fprintf(sb, "\n_… and %s; see the JSON report._\n", text.Count(more, "more TensorRT build"))
	}
	sb.WriteString("\n")
}

// networkText is what the network held: "images FLOAT 1x3x640x640 →
// output0 FLOAT 1x84x8400 · 152 layers" (-1: a dynamic dimension).
func networkText(n *Network) string {
	if n == nil {
		return "—"
	}
	return tensorsText(n.Inputs) + " → " + tensorsText(n.Outputs) + " · " + text.Count(n.Layers, "layer")
}

func tensorsText(ts []Tensor) string {
	if len(ts) == 0 {
		return "none"
	}
	parts := make([]string, 0, maxTensors+1)
	for _, t := range ts[:min(len(ts), maxTensors)] {
		parts = append(parts, text.CutRunes(t.Name, 40)+" "+t.DType+" "+settings.DimsX(t.Shape))
	}
	if more := len(ts) - maxTensors; more > 0 {
		parts = append(parts, fmt.Sprintf("+%d more", more))
	}
	return strings.Join(parts, ", ")
}

// innerReasons says why each TensorRT build that did not succeed did not.
func innerReasons(sb *strings.Builder, inner []TensorRTBuild) {
	n := 0
	for i := range inner {
		t := &inner[i]
		if !failedStatus(t.Status) {
			continue
		}
		if n == maxInnerRows {
			break
		}
		n++
		fmt.Fprintf(sb, "- TensorRT build %d %s: %s\n", t.Index, text.Markdown(t.Status), text.Markdown(text.CutRunes(cmp.Or(innerReason(t), t.Status), 1000)))
	}
	if n > 0 {
		sb.WriteString("\n")
	}
}

// innerColumn is the column head of a TensorRT build of TensorRT builds in a table: "#1".
func innerColumn(t *TensorRTBuild) string { return text.Markdown(fmt.Sprintf("#%d", t.Index)) }

// innerSettings is the builder settings each TensorRT build's config held
// when it began, a row per setting and a column per build, each cell
// written as the matrix's settings table writes it.
func innerSettings(sb *strings.Builder, inner []TensorRTBuild) {
	applies := make([]map[string]any, len(inner))
	keys := map[string]bool{}
	for i := range inner {
		applies[i] = applied(inner[i].Settings)
		for k := range applies[i] {
			keys[k] = true
		}
	}
	if len(keys) == 0 {
		return
	}
	cells := settingCells(applies)
	sb.WriteString("**Settings read from each build's config**\n\n| Setting |")
	for i := range inner {
		sb.WriteString(" " + innerColumn(&inner[i]) + " |")
	}
	sb.WriteString("\n|---|" + strings.Repeat("---|", len(inner)) + "\n")
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		sb.WriteString("| " + text.Markdown(k) + " |")
		for i := range inner {
			cell := "—"
			if v, has := cells[i][k]; has {
				cell = text.Markdown(text.CutRunes(v, maxSettingRunes))
			}
			sb.WriteString(" " + cell + " |")
		}
		sb.WriteString("\n")
	}
	sb.WriteString("\n")
}

// innerPhases is the phase table of the TensorRT builds, as the run's is
// of its builds.
func innerPhases(sb *strings.Builder, inner []TensorRTBuild, more, top int) {
	var cols []phaseColumn
	for i := range inner {
		if tree := inner[i].Folded(); len(tree) > 0 {
			cols = append(cols, phaseColumn{innerColumn(&inner[i]), tree})
		}
	}
	if len(cols) == 0 {
		return
	}
	sb.WriteString("**Phases by self time**\n\n")
	sb.WriteString(phaseTableOf(cols, top, more, "more TensorRT build"))
	sb.WriteString("\n")
}
