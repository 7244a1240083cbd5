package build

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/memory"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// A build's memory, from the moment its first process starts to its end:
// its processes are sampled (internal/memory's Monitor), kept in a
// memory cgroup of their own where one can be made, given a raised
// oom_score_adj, held to the memory budgets, and, when the kernel's OOM
// killer ends one of them, named for it.

// memoryGrace bounds the grace of a stop for memory: memory grows where
// no callback comes, so the grace of a time budget (30 s by default) is
// too long to wait.
const memoryGrace = 5 * time.Second

// The rules that kill a build stopped for memory at once, not after its
// grace: its processes hold more than overBudgetKill times its budget, or
// what is left free falls below lowRoomPercent of the memory there is
// (the machine's, or the cgroup's trt-action runs in).
const (
	overBudgetKill = 1.10
	lowRoomPercent = 2.0
)

// buildMemory is one build's memory; the build's goroutine owns it.
type buildMemory struct {
	run   *runMemory
	watch *memory.Watch
	group *memory.Group
	// noGroup says why the build has no cgroup of its own.
	noGroup string
	// oomsBefore is the machine's OOM kill count when the build started
	// (oomsKnown: /proc/vmstat has one).
	oomsBefore int64
	oomsKnown  bool

	now     memory.Sample // the newest sample
	sampled bool
	warned  map[string]bool
	// overMemory is the memory budget that stopped the build, whose kill
	// rule applies until it ends.
	overMemory *report.BudgetHit

	trt memory.TensorRTFigures // TensorRT's own, from its log
	res *report.Memory         // once ended
}

// startMemory readies the build's memory before its first process
// starts: its cgroup, and the machine's OOM kill count.
func (w *watch) startMemory() {
	m := &buildMemory{run: w.r.mem, warned: map[string]bool{}}
	w.mem = m
	m.oomsBefore, m.oomsKnown = memory.OOMKillsOnMachine()
	if m.run.cgroups == nil {
		m.noGroup = m.run.noCgroup
		return
	}
	g, err := m.run.cgroups.NewGroup()
	if err != nil {
		m.noGroup = err.Error()
		return
	}
	m.group = g
}

// adopt takes the build's first process, pid, which has not started the
// build yet (a worker waits for its spec, a reaper for its start line):
// it gets its oom_score_adj and goes into the build's cgroup before it
// allocates anything that counts, and everything it starts follows it.
// A worker is the build itself (root); a reaper is trt-action's, so only
// what it starts is the build's.
func (m *buildMemory) adopt(pid int, root bool) {
	_ = memory.RaiseOOMScore(pid) // a process this user started: only a vanished one refuses
	if m.group != nil {
		if err := m.group.Add(pid); err != nil {
			m.noGroup = fmt.Sprintf("cannot put the build in its memory cgroup: %v", err)
			_ = m.group.Remove()
			m.group = nil
		}
	}
	m.watch = m.run.monitor.Watch(pid, root, m.group)
}

// samples is where the build's samples arrive; nil (never ready) before
// its first process started.
func (m *buildMemory) samples() <-chan memory.Sample {
	if m == nil || m.watch == nil {
		return nil
	}
	return m.watch.Samples()
}

// use is the build's memory now, for heartbeats; nil before a sample.
func (m *buildMemory) use() *event.MemoryUse {
	if m == nil || !m.sampled {
		return nil
	}
	s := m.now
	return &event.MemoryUse{Host: s.Host, PeakHost: s.Peak, GPU: s.GPU, PeakGPU: s.PeakGPU, HasGPU: s.HasGPU || s.PeakGPU > 0}
}

// noteSample takes a sample: the budgets are checked on it, and a build
// stopped for memory may be killed at once.
func (w *watch) noteSample(s memory.Sample, judging bool) {
	m := w.mem
	m.now, m.sampled = s, true
	b := w.budget.spec // a script build's covers its whole command (commandBudgets)
	for _, l := range memoryLimits(b, s) {
		w.peakUse = max(w.peakUse, float64(l.held)*100/float64(l.limit))
		if judging {
			if m.overMemory == nil && l.held > l.limit {
				w.stopForMemory(l)
			} else {
				w.warnMemory(l, b.WarnPercent)
			}
		}
	}
	if hit := m.overMemory; hit != nil {
		held := s.Host
		if hit.Kind == report.BudgetGPUMemory {
			held = s.GPU
		}
		hit.PeakBytes = max(hit.PeakBytes, held)
		w.killIfOverRoom(hit, held)
	}
}

// memoryLimit is one memory budget against what the build holds.
type memoryLimit struct {
	kind        string
	limit, held int64
}

func memoryLimits(b matrix.Budgets, s memory.Sample) []memoryLimit {
	var out []memoryLimit
	if b.Memory > 0 {
		out = append(out, memoryLimit{kind: report.BudgetMemory, limit: b.Memory, held: s.Host})
	}
	if b.GPUMemory > 0 && s.HasGPU {
		out = append(out, memoryLimit{kind: report.BudgetGPUMemory, limit: b.GPUMemory, held: s.GPU})
	}
	return out
}

// stopForMemory stops the build softly (stepComplete returns false from
// now on, as for a time budget) and kills it after min(grace, 5 s).
func (w *watch) stopForMemory(l memoryLimit) {
	hit := &report.BudgetHit{Kind: l.kind, LimitBytes: l.limit, PeakBytes: l.held, ElapsedMs: w.now().Milliseconds()}
	why := describeHit(hit)
	if w.ctl.softStop(why, w.now(), min(w.spec.Budgets.Grace, memoryGrace)) {
		w.hit, w.mem.overMemory = hit, hit
		w.emit(event.Event{Kind: event.Stopping, Message: why})
	}
}

// killIfOverRoom kills a build stopped for memory at once when it holds
// more than 10% over its budget, or memory is all but gone. Only a build
// stopped for memory asks what the machine has left (a read of
// /proc/meminfo and of trt-action's cgroup), not every look of the
// sampler.
func (w *watch) killIfOverRoom(hit *report.BudgetHit, held int64) {
	if float64(held) > overBudgetKill*float64(hit.LimitBytes) {
		w.ctl.killOverBudget(fmt.Sprintf("it went on to %s, more than 10%% over its budget, so it was killed at once", text.Bytes(held)))
		return
	}
	if room, ok := w.mem.run.machine.Room(); ok && room.FreePercent() < lowRoomPercent {
		w.ctl.killOverBudget(fmt.Sprintf("only %s of memory was left free (less than 2%%), so it was killed at once", text.Bytes(room.Free)))
	}
}

// warnMemory warns once when the build passes the warn percentage of a
// memory budget.
func (w *watch) warnMemory(l memoryLimit, percent float64) {
	if percent <= 0 || w.mem.warned[l.kind] || float64(l.held) < float64(l.limit)*percent/100 {
		return
	}
	w.mem.warned[l.kind] = true
	msg := fmt.Sprintf("%s used %.0f%% of its %s limit (%s)", l.kind, float64(l.held)*100/float64(l.limit), text.ExactSize(l.limit), text.Bytes(l.held))
	w.res.Warnings = append(w.res.Warnings, msg)
	w.emit(event.Event{Kind: event.BudgetWarning, Message: msg})
}

// noteLogMemory keeps TensorRT's own figures from a log line.
func (m *buildMemory) noteLog(line string) {
	if m != nil {
		m.trt.Note(line)
	}
}

// end records what the build held once its processes are gone: state is
// how its first process ended (its rusage names the largest process's
// peak), nil when it never started. The cgroup is read and removed.
func (m *buildMemory) end(state *os.ProcessState) *report.Memory {
	if m == nil || m.res != nil {
		return m.result()
	}
	res := &report.Memory{HostSource: report.MemoryFromProc, NoCgroup: m.noGroup}
	if m.watch != nil {
		p := m.run.monitor.Unwatch(m.watch)
		res.PeakHostBytes = p.Host
		if p.HasGPU && p.GPU > 0 {
			res.PeakGPUBytes, res.GPUSource = p.GPU, report.MemoryFromNVML
		}
	}
	if state != nil {
		if ru, ok := state.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 0 {
			res.LargestProcessBytes = ru.Maxrss << 10 // KiB on Linux
			res.PeakHostBytes = max(res.PeakHostBytes, res.LargestProcessBytes)
		}
	}
	if g := m.group; g != nil {
		res.HostSource = report.MemoryFromProcCgroupV1
		if g.Version == memory.V2 {
			res.HostSource = report.MemoryFromProcCgroupV2
		}
		res.CgroupPeakBytes, _ = g.Peak()
		res.OOMKills, _ = g.OOMKills()
		_ = g.Remove() // one left (a process that outlived the build) is swept by a later run
	}
	if room, ok := m.run.machine.Room(); ok {
		res.HostLimitBytes = room.Total
	}
	res.TensorRTCPUBytes, res.TensorRTGPUBytes = m.trt.CPU, m.trt.GPU
	res.TensorRTAllocatorCPUBytes, res.TensorRTAllocatorGPUBytes = m.trt.AllocatorsCPU, m.trt.AllocatorsGPU
	if res.PeakHostBytes == 0 {
		// Never sampled (it ended at once) and no rusage: nothing measured.
		res.HostSource = ""
	}
	m.res = res
	return m.result()
}

// result is the build's memory for its report entry: nil when nothing at
// all was measured (its process never started, or ended before any look
// and without a rusage).
func (m *buildMemory) result() *report.Memory {
	if m == nil || m.res == nil {
		return nil
	}
	r := m.res
	if r.PeakHostBytes == 0 && r.PeakGPUBytes == 0 && r.CgroupPeakBytes == 0 && r.TensorRTCPUBytes == 0 &&
		r.TensorRTGPUBytes == 0 && r.TensorRTAllocatorCPUBytes == 0 && r.TensorRTAllocatorGPUBytes == 0 {
		return nil
	}
	return r
}

// killedByOOM reports whether the kernel's OOM killer ended the build:
// its cgroup counted a kill, or, without one, its process died of
// SIGKILL nobody of trt-action's sent while the machine's count of OOM
// kills grew.
func (m *buildMemory) killedByOOM(sigkilled bool) bool {
	if m == nil || m.res == nil {
		return false
	}
	if m.group != nil || m.res.OOMKills > 0 {
		return m.res.OOMKills > 0
	}
	if !sigkilled || !m.oomsKnown {
		return false
	}
	after, ok := memory.OOMKillsOnMachine()
	return ok && after > m.oomsBefore
}
