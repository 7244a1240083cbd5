package memory

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// nextSample waits for a sample of w that pass accepts.
func nextSample(t *testing.T, w *Watch, pass func(Sample) bool) Sample {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case s := <-w.Samples():
			if pass(s) {
				return s
			}
		case <-deadline:
			t.Fatal("no such sample in 10s")
		}
	}
}

// A tree's sample is the sum of its processes' resident sizes, each as
// /proc/PID/status shows it; the root counts or not as asked.
func TestMonitorSumsTheTree(t *testing.T) {
	h := startHolder(t, 40, 3) // a root and three children, 40 MiB each
	m := NewMonitor(10*time.Millisecond, nil)
	defer m.Close()
	for _, includeRoot := range []bool{true, false} {
		w := m.Watch(h.cmd.Process.Pid, includeRoot, nil)
		want := 3
		if includeRoot {
			want = 4
		}
		s := nextSample(t, w, func(s Sample) bool { return s.Procs == want })
		var sum int64
		for pid := range s.ByPID {
			sum += statusRSS(t, pid)
		}
		// The processes hold still: another reading of the same
		// counters, a moment later, differs by a few pages at most.
		if diff := s.Host - sum; diff < -1<<20 || diff > 1<<20 || s.Host < int64(want)*40<<20 {
			t.Errorf("includeRoot %v: sample %d bytes, processes' own sum %d", includeRoot, s.Host, sum)
		}
		if _, in := s.ByPID[h.cmd.Process.Pid]; in != includeRoot {
			t.Errorf("includeRoot %v: root in sample: %v", includeRoot, in)
		}
		if p := m.Unwatch(w); p.Host < s.Host || p.Looks == 0 {
			t.Errorf("peaks %+v below a sample of %d", p, s.Host)
		}
	}
}

// A tree in a cgroup is the group's processes, the root left out when
// asked.
func TestMonitorReadsTheGroup(t *testing.T) {
	h := v1Hierarchy(t)
	g, err := h.NewGroup()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	holder := startHolder(t, 20, 2)
	for _, pid := range append(descendantsOf(t, holder.cmd.Process.Pid), holder.cmd.Process.Pid) {
		must(t, g.Add(pid))
	}
	m := NewMonitor(10*time.Millisecond, nil)
	defer m.Close()
	w := m.Watch(holder.cmd.Process.Pid, false, g)
	s := nextSample(t, w, func(s Sample) bool { return s.Procs > 0 })
	if s.Procs != 2 || s.Host < 40<<20 {
		t.Errorf("sample of %d processes, %d bytes", s.Procs, s.Host)
	}
	m.Unwatch(w)
	holder.stop()
}

func descendantsOf(t *testing.T, pid int) []int {
	t.Helper()
	buf := make([]byte, 4096)
	return newProcFS("/proc").scan(buf).below(pid)
}

// GPU figures are the reader's, for the tree's processes only; none seen
// is no figure, not zero.
func TestMonitorGPU(t *testing.T) {
	h := startHolder(t, 1, 1)
	kids := descendantsOf(t, h.cmd.Process.Pid)
	reader := func() (map[int]int64, error) {
		return map[int]int64{h.cmd.Process.Pid: 100, kids[0]: 20, 1: 999}, nil
	}
	m := NewMonitor(10*time.Millisecond, reader)
	defer m.Close()
	w := m.Watch(h.cmd.Process.Pid, true, nil)
	s := nextSample(t, w, func(Sample) bool { return true })
	if !s.HasGPU || s.GPU != 120 || s.PeakGPU != 120 {
		t.Errorf("gpu %d (peak %d, seen %v), want 120", s.GPU, s.PeakGPU, s.HasGPU)
	}
	m.Unwatch(w)
	none := NewMonitor(10*time.Millisecond, func() (map[int]int64, error) { return nil, errors.New("no driver") })
	defer none.Close()
	w = none.Watch(h.cmd.Process.Pid, true, nil)
	s = nextSample(t, w, func(Sample) bool { return true })
	if p := none.Unwatch(w); s.HasGPU || p.HasGPU {
		t.Errorf("a GPU figure without a reading: %+v", p)
	}
}

// Looks that cost more are taken less often: a look of 5 ms waits half a
// second for the next (a hundredth of a core).
func TestMonitorStretchesCostlyLooks(t *testing.T) {
	slow := func() (map[int]int64, error) { time.Sleep(5 * time.Millisecond); return nil, nil }
	m := NewMonitor(10*time.Millisecond, slow)
	defer m.Close()
	w := m.Watch(os.Getpid(), true, nil)
	// The first look's cost sets the interval before the second look.
	nextSample(t, w, func(Sample) bool { return true })
	nextSample(t, w, func(Sample) bool { return true })
	interval, cost := m.Interval()
	if cost < 5*time.Millisecond || interval < 500*time.Millisecond || interval != min(max(100*cost, 10*time.Millisecond), MaxInterval) {
		t.Errorf("interval %s after a look of %s", interval, cost)
	}
	m.Unwatch(w)
}

// Room is MemAvailable of MemTotal, or a cgroup's limit less its use
// when that is tighter.
func TestMachineRoom(t *testing.T) {
	dir := t.TempDir()
	info := filepath.Join(dir, "meminfo")
	must(t, os.WriteFile(info, []byte("MemTotal:       24683792 kB\nMemFree:  1 kB\nMemAvailable:   23340708 kB\n"), 0o644))
	m := &Machine{meminfo: info}
	r, ok := m.Room()
	if !ok || r.Total != 24683792<<10 || r.Free != 23340708<<10 {
		t.Errorf("room = %+v, %v", r, ok)
	}
	must(t, os.WriteFile(filepath.Join(dir, "memory.max"), []byte("4294967296\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "memory.current"), []byte("4227858432\n"), 0o644))
	m.cgroups = &Hierarchy{Version: V2, Dir: dir, Mount: dir}
	r, _ = m.Room()
	if r.Total != 4<<30 || r.Free != 64<<20 || r.FreePercent() > 1.6 || r.FreePercent() < 1.5 {
		t.Errorf("room in a cgroup = %+v (%.2f%%)", r, r.FreePercent())
	}
}

// A build's process gets oom_score_adj 500, and keeps a higher one.
func TestRaiseOOMScore(t *testing.T) {
	h := startHolder(t, 1, 0)
	path := filepath.Join("/proc", itoa(h.cmd.Process.Pid), "oom_score_adj")
	must(t, RaiseOOMScore(h.cmd.Process.Pid))
	if v, _ := readInt(path); v != OOMScoreAdj {
		t.Errorf("oom_score_adj = %d", v)
	}
	must(t, writeFile(path, "700"))
	must(t, RaiseOOMScore(h.cmd.Process.Pid))
	if v, _ := readInt(path); v != 700 {
		t.Errorf("oom_score_adj = %d, want 700 kept", v)
	}
	if _, ok := OOMKillsOnMachine(); !ok {
		t.Error("no oom_kill count in /proc/vmstat")
	}
}
