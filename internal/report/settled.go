package report

import (
	"encoding/json"
	"fmt"
	"slices"
)

// A matrix of thousands of builds must not hold every finished build's
// phase tree, slowest instances and log lines until the run ends: that made
// the supervisor grow by about 12 KB a finished build. Once a build has
// ended and its encoding is kept in the report's spool (KeepEncodings), the
// report keeps in memory only what the views read of most builds (the
// build's fields without its trees, nor the detail of the TensorRT builds
// inside a script build, the log and output lines they quote, and a digest
// of its phases); the few views that draw trees or that detail (the
// summary's phase table, timeline and script sections, all capped, and
// JUnit's test case of a script build, one at a time) read the build back
// from its encoding.

// digest is what the views read of a settled build's phases.
type digest struct {
	slowest    PhaseTotal // SlowestPath's answer
	hasSlowest bool
	hasTree    bool
	ganttBytes int // the size of the build's section of the summary's timeline

	cache *buildCache // where the whole build's encoding is
	index int
}

// Settle records build i's outcome. With KeepEncodings and its spool, an
// ended build is encoded now and kept in memory without its detail; the
// report it writes and every view of it stay as they would be with the
// whole build in memory. A build that changes after it ended (the end of
// its push to the shared store) is settled again, whole: b, never the
// settled copy Builds[i] holds, which lacks its detail.
func (r *Report) Settle(i int, b *Build) {
	r.Builds[i] = *b
	c := r.encoded
	if c == nil || c.spool == nil || !ended(b) {
		return
	}
	if _, err := c.store(i, b); err != nil || !c.spooled(i) {
		return // kept whole
	}
	r.Builds[i] = settled(b, c, i)
}

// settled is b without its phase trees and with only the log lines a view
// quotes (lastLog, the JUnit failure body), plus the digest of its phases;
// a script build also without its TensorRT builds' detail (settledInner)
// and with only the last lines of output the summary and annotations
// quote (JUnit, which has them all, reads the build back).
func settled(b *Build, c *buildCache, i int) Build {
	tree := b.Folded()
	d := &digest{hasTree: len(tree) > 0, cache: c, index: i}
	d.slowest, d.hasSlowest = slowestOf(b, tree)
	d.ganttBytes = len(ganttSections(b, tree))
	s := *b
	s.PhaseTree, s.SlowestPhases, s.Phases = nil, nil, nil
	s.TensorRTBuilds = settledInner(b.TensorRTBuilds)
	if b.Script != nil {
		sc := *b.Script
		sc.OutputTail = slices.Clone(sc.OutputTail[max(0, len(sc.OutputTail)-maxOutputLines):])
		s.Script = &sc
	}
	s.Log = quotedLog(b.Log)
	if b.Cache != nil && b.Cache.Original != nil {
		// A hit's original phase tree is read from the encoding too.
		c := *b.Cache
		c.Original = nil
		s.Cache = &c
	}
	s.digest = d
	return s
}

// settledInner is a script build's TensorRT builds as a settled build
// keeps them: what views read of every build (statuses, times, sizes,
// reasons), without their phase trees, settings and networks, which only
// the summary's script sections show (they read the build back). A new
// slice: b's own is shared with the event that carried it.
func settledInner(inner []TensorRTBuild) []TensorRTBuild {
	if inner == nil {
		return nil
	}
	out := slices.Clone(inner)
	for i := range out {
		t := &out[i]
		t.PhaseTree, t.SlowestPhases, t.Phases, t.Settings, t.Network = nil, nil, nil, nil, nil
	}
	return out
}

// quotedLog is the lines of log that views quote: every error, or without
// an error the last warnings lastLog shows. A new slice: b's own is shared
// with the event that carried it.
func quotedLog(log []LogLine) []LogLine {
	var errs []LogLine
	for _, l := range log {
		if l.Severity == "error" {
			errs = append(errs, l)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return append([]LogLine(nil), lastLog(log)...)
}

// whole reads the settled build back from its encoding.
func (d *digest) whole() (Build, error) {
	var b Build
	c := d.cache
	if !c.spooled(d.index) {
		return b, fmt.Errorf("build %d: encoding not kept", d.index+1)
	}
	err := json.NewDecoder(c.encoding(&c.entries[d.index])).Decode(&b)
	return b, err
}

// tree is the settled build's folded phase tree, read back from its
// encoding. The spool is this process's own file, so reading it fails only
// on an I/O error; the views then show the build without its phases.
func (d *digest) tree() []*PhaseNode {
	if !d.hasTree {
		return nil
	}
	b, err := d.whole()
	if err != nil {
		return nil
	}
	return b.Folded()
}
