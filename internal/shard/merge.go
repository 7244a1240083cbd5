package shard

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
)

// Merge joins shard reports into one report for the whole matrix. Builds keep
// the order of the reports given, their start offsets are rebased onto the
// earliest shard's start, and the merged duration spans from that start to
// the end of the last shard. The result is complete only if every shard is.
// A build name found in two shards is an error: the plan gave it to one.
func Merge(reports []*report.Report) (*report.Report, error) {
	if len(reports) == 0 {
		return nil, errors.New("merge: no reports given")
	}
	if err := checkVersions(reports); err != nil {
		return nil, err
	}
	start := earliestStart(reports)
	out := &report.Report{
		Version:   reports[0].Version,
		Tool:      reports[0].Tool,
		Matrix:    reports[0].Matrix,
		StartedAt: start,
		Complete:  true,
	}
	seen := map[string]int{} // build name -> 1-based shard that has it
	var end time.Time
	var interrupts, ended []string
	for i, r := range reports {
		offset := r.StartedAt.Sub(start).Milliseconds()
		for _, b := range r.Builds {
			if prev, dup := seen[b.Name]; dup {
				return nil, fmt.Errorf("merge: build %q is in report %d and report %d; each build must come from one shard", b.Name, prev, i+1)
			}
			seen[b.Name] = i + 1
			b.StartMs += offset
			out.Builds = append(out.Builds, b)
		}
		if e := r.StartedAt.Add(time.Duration(r.DurationMs) * time.Millisecond); e.After(end) {
			end = e
		}
		out.Complete = out.Complete && r.Complete
		if r.Interrupted != "" {
			interrupts = append(interrupts, fmt.Sprintf("shard %d: %s", i+1, r.Interrupted))
		}
		if out.Signal == "" {
			// A shard a signal stopped stops the matrix, as the signal
			// would have stopped one job running every build. Shards
			// stopped by different signals (a runner's cancel sends
			// SIGINT, then SIGTERM) keep the first given's.
			out.Signal = r.Signal
		}
		if r.Ended != "" {
			ended = append(ended, fmt.Sprintf("shard %d: %s", i+1, r.Ended))
		}
	}
	out.DurationMs = end.Sub(start).Milliseconds()
	out.Interrupted = strings.Join(interrupts, "; ")
	out.Ended = strings.Join(ended, "; ")
	out.Cache = mergeStores(reports)
	return out, nil
}

// mergeStores is the merged run's shared store: the first shard's that
// had one (its URL and mode), every shard's mode note and warnings, each
// once and named by its shard, and, when the shards did not all use that
// store (another, or none), each shard's in Remotes. nil when no shard
// had a store.
func mergeStores(reports []*report.Report) *report.RunCache {
	var out *report.RunCache
	var notes []string
	differ := false
	for i, r := range reports {
		c := r.Cache
		switch {
		case c == nil:
			continue
		case out == nil:
			out = &report.RunCache{Remote: c.Remote, RemoteMode: c.RemoteMode}
		case c.Remote != out.Remote:
			differ = true
		}
		if c.ModeNote != "" {
			notes = appendOnce(notes, c.ModeNote, i)
		}
		for _, w := range c.Warnings {
			out.Warnings = appendOnce(out.Warnings, w, i)
		}
	}
	if out == nil {
		return nil
	}
	out.ModeNote = strings.Join(notes, "; ")
	for _, r := range reports {
		differ = differ || r.Cache == nil
	}
	if differ {
		for i, r := range reports {
			store := "none"
			if r.Cache != nil {
				store = r.Cache.Remote
			}
			out.Remotes = append(out.Remotes, fmt.Sprintf("shard %d: %s", i+1, store))
		}
	}
	return out
}

// appendOnce adds shard i's (0-based) line to lines, "shard N: line",
// unless another shard gave the same line: then it is kept once, without
// a shard.
func appendOnce(lines []string, line string, i int) []string {
	named := fmt.Sprintf("shard %d: %s", i+1, line)
	for j, l := range lines {
		if l == line {
			return lines
		}
		if _, rest, ok := strings.Cut(l, ": "); ok && strings.HasPrefix(l, "shard ") && rest == line {
			lines[j] = line // more than one shard said it
			return lines
		}
	}
	return append(lines, named)
}

func checkVersions(reports []*report.Report) error {
	for i, r := range reports {
		if r == nil {
			return fmt.Errorf("merge: report %d is empty", i+1)
		}
		if r.Version != reports[0].Version {
			return fmt.Errorf("merge: report %d has schema version %d, report 1 has %d; merge reports written by the same trt-action version", i+1, r.Version, reports[0].Version)
		}
	}
	return nil
}

func earliestStart(reports []*report.Report) time.Time {
	start := reports[0].StartedAt
	for _, r := range reports[1:] {
		if r.StartedAt.Before(start) {
			start = r.StartedAt
		}
	}
	return start
}

// AddMissing adds the matrix's builds that no shard reported, as never
// started: a shard job that died before uploading its report must not
// leave a green run.
func AddMissing(r *report.Report, builds []matrix.Build) {
	have := map[string]bool{}
	for _, b := range r.Builds {
		have[b.Name] = true
	}
	for _, b := range builds {
		if !have[b.Name] {
			r.Builds = append(r.Builds, report.Build{Name: b.Name, Backend: b.Backend, Axes: b.Axes, Status: report.StatusPending,
				Reason: "missing: no shard report has this build (did its job end before uploading its report?)"})
			r.Complete = false
		}
	}
}

// MarkUnfinished says why a merged report lacks builds: the shards are
// over, so what they did not finish never will, and the headline must not
// read as a run still going.
func MarkUnfinished(r *report.Report) {
	for _, b := range r.Builds {
		if b.Status == report.StatusPending || b.Status == report.StatusRunning {
			r.Complete = false
		}
	}
	if !r.Complete && r.Interrupted == "" && r.Ended == "" {
		r.Ended = "merged from incomplete shard reports"
	}
}
