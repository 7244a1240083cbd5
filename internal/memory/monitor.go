// Package memory measures the memory of builds: the host memory of each
// build's whole process tree, sampled from /proc, the kernel's own
// account of it where a memory cgroup can be made for the build
// (cgroup.go), GPU memory through a reader the caller gives (NVML, in
// package native), what the machine has left (machine.go) and TensorRT's
// own figures from its log (tensorrt.go).
//
// One Monitor serves a run: each look reads the machine's process table
// and the GPUs once, whatever the number of builds running, and hands each
// watched tree its sample. A look costs in proportion to the processes
// read (BENCHMARKS.md has the figures), so the Monitor stretches the time
// between looks to keep their cost under a hundredth of one core.
package memory

import (
	"sync"
	"time"
)

// Sampling rates. A look every 100 ms sees a build that grows by a
// gigabyte a second within a tenth of a gigabyte, well inside the 10%
// over a budget at which a build is killed at once; looks are spread
// out so they cost at most 1/costShare of a core, and never further
// apart than MaxInterval.
const (
	BaseInterval = 100 * time.Millisecond
	MaxInterval  = 2 * time.Second
	costShare    = 100
)

// Sample is one look at a build's processes.
type Sample struct {
	At    time.Time
	Host  int64         // resident bytes of the tree's processes, summed
	Procs int           // processes in the tree
	ByPID map[int]int64 // each process's resident bytes
	// GPU is the GPU memory the tree's processes hold, every GPU summed;
	// HasGPU is false when the GPU reader saw none of them (no driver,
	// no process of the tree on a GPU, or process ids that do not match,
	// as inside a container).
	GPU      int64
	HasGPU   bool
	GPUByPID map[int]int64
	// Peak and PeakGPU are the highest Host and GPU of every look at this
	// tree so far.
	Peak    int64
	PeakGPU int64
}

// GPUReader reads the GPU memory each process holds, every GPU summed,
// by process id.
type GPUReader func() (map[int]int64, error)

// Monitor samples the process trees of a run's builds.
type Monitor struct {
	proc procFS
	read *reader // the monitor goroutine's
	gpu  GPUReader
	base time.Duration

	mu       sync.Mutex
	watches  map[*Watch]bool
	interval time.Duration // between looks, as the last look's cost set it
	lastCost time.Duration
	done     chan struct{}
	stopped  chan struct{}
}

// NewMonitor starts a monitor that looks every base (BaseInterval when 0),
// or less often when looks cost more. gpu may be nil (no GPU reading).
func NewMonitor(base time.Duration, gpu GPUReader) *Monitor {
	if base <= 0 {
		base = BaseInterval
	}
	fs := newProcFS("/proc")
	m := &Monitor{proc: fs, read: newReader(fs), gpu: gpu, base: base, interval: base,
		watches: map[*Watch]bool{}, done: make(chan struct{}), stopped: make(chan struct{})}
	go m.loop()
	return m
}

// Close stops the monitor.
func (m *Monitor) Close() {
	close(m.done)
	<-m.stopped
}

// Interval is the time between looks now, and what the last look cost.
func (m *Monitor) Interval() (interval, cost time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.interval, m.lastCost
}

// Watch is one tree the monitor samples.
type Watch struct {
	root        int
	includeRoot bool
	group       *Group
	samples     chan Sample

	// the monitor's, under its lock
	peak, peakGPU int64
	gpuSeen       bool
	looks         int
}

// Watch samples the tree under root from the next look on: root itself
// too with includeRoot (a worker, whose process is the build), or only
// what it started (a script build's reaper, which is trt-action's). With
// group, the tree is the group's processes (one read, and no process
// that left its parent's tree is missed).
func (m *Monitor) Watch(root int, includeRoot bool, group *Group) *Watch {
	w := &Watch{root: root, includeRoot: includeRoot, group: group, samples: make(chan Sample, 1)}
	m.mu.Lock()
	m.watches[w] = true
	m.mu.Unlock()
	return w
}

// Samples delivers the newest sample; one not taken before the next is
// replaced by it (the peaks carry over).
func (w *Watch) Samples() <-chan Sample { return w.samples }

// Peaks is what a watch saw in all.
type Peaks struct {
	Host   int64
	GPU    int64
	HasGPU bool
	Looks  int // samples taken; 0: the tree ended before the first
}

// Unwatch stops sampling w and returns its peaks.
func (m *Monitor) Unwatch(w *Watch) Peaks {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.watches, w)
	return Peaks{Host: w.peak, GPU: w.peakGPU, HasGPU: w.gpuSeen, Looks: w.looks}
}

func (m *Monitor) loop() {
	defer close(m.stopped)
	defer m.read.close()
	t := time.NewTimer(m.base)
	defer t.Stop()
	for {
		select {
		case <-m.done:
			return
		case <-t.C:
		}
		start := time.Now()
		m.look()
		cost := time.Since(start)
		m.mu.Lock()
		m.lastCost = cost
		m.interval = min(max(m.base, costShare*cost), MaxInterval)
		next := m.interval
		m.mu.Unlock()
		t.Reset(next)
	}
}

// look takes one sample of every watched tree.
func (m *Monitor) look() {
	m.mu.Lock()
	watches := make([]*Watch, 0, len(m.watches))
	for w := range m.watches {
		watches = append(watches, w)
	}
	m.mu.Unlock()
	if len(watches) == 0 {
		m.read.close()
		return
	}
	l := m.newLook()
	defer func() { m.read.forget(l.seen) }()
	for _, w := range watches {
		s := l.sample(w)
		m.mu.Lock()
		if !m.watches[w] {
			m.mu.Unlock()
			continue
		}
		w.looks++
		w.peak = max(w.peak, s.Host)
		if s.HasGPU {
			w.gpuSeen = true
			w.peakGPU = max(w.peakGPU, s.GPU)
		}
		s.Peak, s.PeakGPU = w.peak, w.peakGPU
		m.mu.Unlock()
		w.deliver(s)
	}
}

// deliver hands s on, replacing a sample not yet taken.
func (w *Watch) deliver(s Sample) {
	for {
		select {
		case w.samples <- s:
			return
		default:
		}
		select {
		case <-w.samples:
		default:
		}
	}
}

// aLook is what one look reads once for every tree.
type aLook struct {
	m       *Monitor
	at      time.Time
	buf     []byte
	seen    map[int]bool // the processes of every tree
	table   table        // read when a tree without a group needs it
	scanned bool
	gpu     map[int]int64
}

func (m *Monitor) newLook() *aLook {
	l := &aLook{m: m, at: time.Now(), buf: m.read.buf, seen: map[int]bool{}}
	if m.gpu != nil {
		if g, err := m.gpu(); err == nil {
			l.gpu = g
		}
	}
	return l
}

// pids lists the processes of w's tree.
func (l *aLook) pids(w *Watch) []int {
	if w.group != nil {
		var out []int
		for _, pid := range w.group.PIDs(l.buf) {
			if pid != w.root || w.includeRoot {
				out = append(out, pid)
			}
		}
		return out
	}
	if !l.scanned {
		l.table, l.scanned = l.m.read.scan(), true
	}
	below := l.table.below(w.root)
	if w.includeRoot {
		below = append(below, w.root)
	}
	return below
}

func (l *aLook) sample(w *Watch) Sample {
	s := Sample{At: l.at, ByPID: map[int]int64{}}
	for _, pid := range l.pids(w) {
		l.seen[pid] = true
		rss, ok := l.m.read.rss(pid)
		if !ok || rss == 0 {
			continue // gone since it was listed, or a zombie
		}
		s.Host += rss
		s.Procs++
		s.ByPID[pid] = rss
		if g, on := l.gpu[pid]; on {
			if s.GPUByPID == nil {
				s.GPUByPID = map[int]int64{}
			}
			s.GPUByPID[pid] = g
			s.GPU += g
			s.HasGPU = true
		}
	}
	return s
}
