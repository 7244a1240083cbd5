package memory

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// writeProc writes a /proc layout: each process's stat (its parent),
// statm (its resident pages) and, with children, task/PID/children.
func writeProc(t *testing.T, procs map[int][3]int, children bool) procFS {
	t.Helper()
	root := t.TempDir()
	kids := map[int][]int{}
	for pid, p := range procs {
		kids[p[0]] = append(kids[p[0]], pid)
	}
	for pid, p := range procs {
		dir := filepath.Join(root, itoa(pid))
		must(t, os.MkdirAll(filepath.Join(dir, "task", itoa(pid)), 0o755))
		// A name with a space and a parenthesis, as a real one may have.
		must(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(itoa(pid)+" (a (b) c) S "+itoa(p[0])+" 1 1 0 -1\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "statm"), []byte("999 "+itoa(p[1])+" 3 4 0 5 0\n"), 0o644))
		if children {
			var line []byte
			for _, c := range kids[pid] {
				line = append(line, itoa(c)+" "...)
			}
			must(t, os.WriteFile(filepath.Join(dir, "task", itoa(pid), "children"), line, 0o644))
		}
	}
	return procFS{root: root, page: 4096, children: children}
}

func itoa(n int) string { return strconv.Itoa(n) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A tree is found the same by a scan of every process and by a walk down
// the children files, and its resident size is each statm's second
// field in pages.
func TestTreeByScanAndByWalk(t *testing.T) {
	// pid: parent, resident pages
	procs := map[int][3]int{10: {1, 100}, 11: {10, 20}, 12: {10, 30}, 13: {12, 40}, 20: {1, 1000}, 21: {20, 7}}
	for _, children := range []bool{false, true} {
		p := writeProc(t, procs, children)
		buf := make([]byte, 4096)
		var below []int
		if children {
			below = p.walk(10, buf)
		} else {
			below = p.scan(buf).below(10)
		}
		slices.Sort(below)
		if !slices.Equal(below, []int{11, 12, 13}) {
			t.Errorf("children %v: below 10 = %v", children, below)
		}
		if rss, ok := p.rss(13, buf); !ok || rss != 40*4096 {
			t.Errorf("rss = %d, %v", rss, ok)
		}
		if _, ok := p.rss(99, buf); ok {
			t.Error("a process that is gone has a size")
		}
	}
}

// The monitor reads the real /proc: which of its ways this kernel has is
// found once (this project's CI kernels lack the children files).
func TestProcFSFindsItsWay(t *testing.T) {
	p := newProcFS("/proc")
	self := itoa(os.Getpid())
	_, err := os.Stat(filepath.Join("/proc", self, "task", self, "children"))
	if p.children != (err == nil) {
		t.Errorf("children = %v, but the file's stat says %v", p.children, err)
	}
}
