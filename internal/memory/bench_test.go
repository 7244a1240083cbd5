package memory

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// BenchmarkLook is one look at a build's tree of 1, 100 and 300 sleeping
// processes: found by a scan of /proc or from the build's cgroup, each
// process's statm read. It
// reports the CPU time of a look (user and system, this process's: the
// benchmark does nothing else meanwhile) as cpu-µs/look (BENCHMARKS.md).
//
//	go test -run '^$' -bench Look -benchtime 200x ./internal/memory
func BenchmarkLook(b *testing.B) {
	for _, n := range []int{1, 100, 300} {
		for _, way := range []string{"scan", "cgroup"} {
			b.Run(fmt.Sprintf("procs=%d/%s", n, way), func(b *testing.B) {
				benchLook(b, n, way)
			})
		}
	}
}

func benchLook(b *testing.B, n int, way string) {
	var group *Group
	if way == "cgroup" {
		h, err := DetectHierarchy()
		if err != nil || os.Geteuid() != 0 {
			b.Skip("no cgroup can be made here")
		}
		if group, err = h.NewGroup(); err != nil {
			b.Skip(err)
		}
		defer func() { _ = group.Remove() }()
	}
	// The tree: a shell whose n-1 children sleep, so the root holds them
	// all; one process: a sleep.
	root := exec.Command("/bin/sh", "-c", fmt.Sprintf("for i in $(seq %d); do sleep 600 & done; wait", n-1))
	if n == 1 {
		root = exec.Command("sleep", "600")
	}
	if err := root.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = root.Process.Kill(); _ = root.Wait() }()
	defer func() {
		for _, pid := range newProcFS("/proc").scan(make([]byte, 4096)).below(root.Process.Pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	fs := newProcFS("/proc")
	m := &Monitor{proc: fs, read: newReader(fs), watches: map[*Watch]bool{}}
	defer m.read.close()
	w := &Watch{root: root.Process.Pid, includeRoot: true, group: group, samples: make(chan Sample, 1)}
	m.watches[w] = true
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if group != nil {
			for _, pid := range append(m.proc.scan(make([]byte, 4096)).below(root.Process.Pid), root.Process.Pid) {
				_ = group.Add(pid)
			}
		}
		m.look()
		if s := <-w.samples; s.Procs >= n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the tree never had %d processes", n)
		}
	}
	before := cpuTime()
	b.ResetTimer()
	for range b.N {
		m.look()
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/look")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
