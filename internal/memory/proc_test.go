package memory

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// writeProc writes a /proc layout: each process's stat (its parent) and
// statm (its resident pages).
func writeProc(t *testing.T, procs map[int][3]int) procFS {
	t.Helper()
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, itoa(pid))
		must(t, os.MkdirAll(dir, 0o755))
		// A name with a space and a parenthesis, as a real one may have.
		must(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(itoa(pid)+" (a (b) c) S "+itoa(p[0])+" 1 1 0 -1\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "statm"), []byte("999 "+itoa(p[1])+" 3 4 0 5 0\n"), 0o644))
	}
	return procFS{root: root, page: 4096}
}

func itoa(n int) string { return strconv.Itoa(n) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A tree is its root's descendants in the scan, and a second scan reads
// the parents only of processes the first did not see; a process's
// resident size is its statm's second field in pages, read through the
// statm kept open.
func TestTreeFromTheScan(t *testing.T) {
	// pid: parent, resident pages
	procs := map[int][3]int{10: {1, 100}, 11: {10, 20}, 12: {10, 30}, 13: {12, 40}, 20: {1, 1000}, 21: {20, 7}}
	p := writeProc(t, procs)
	r := newReader(p)
	defer r.close()
	below := r.scan().below(10)
	slices.Sort(below)
	if !slices.Equal(below, []int{11, 12, 13}) {
		t.Errorf("below 10 = %v", below)
	}
	// Parents are read once: a process moved in the layout keeps its
	// first parent; one gone is gone; a new one is read.
	must(t, os.WriteFile(filepath.Join(p.root, "13", "stat"), []byte("13 (x) S 20 1 1\n"), 0o644))
	must(t, os.RemoveAll(filepath.Join(p.root, "11")))
	must(t, os.MkdirAll(filepath.Join(p.root, "14"), 0o755))
	must(t, os.WriteFile(filepath.Join(p.root, "14", "stat"), []byte("14 (x) S 13 1 1\n"), 0o644))
	below = r.scan().below(10)
	slices.Sort(below)
	if !slices.Equal(below, []int{12, 13, 14}) {
		t.Errorf("after: below 10 = %v", below)
	}
	if rss, ok := r.rss(13); !ok || rss != 40*4096 {
		t.Errorf("rss = %d, %v", rss, ok)
	}
	if _, ok := r.rss(99); ok {
		t.Error("a process that is gone has a size")
	}
	r.forget(map[int]bool{})
	if len(r.statm) != 0 {
		t.Errorf("%d statm files kept", len(r.statm))
	}
}

// A statm kept open reads the process's size now, and a process that
// ended reads as gone, its file closed.
func TestKeptStatmFollowsTheProcess(t *testing.T) {
	h := startHolder(t, 1, 0)
	r := newReader(newProcFS("/proc"))
	defer r.close()
	pid := h.cmd.Process.Pid
	first, ok := r.rss(pid)
	if !ok || first < 1<<20 {
		t.Fatalf("rss %d, %v", first, ok)
	}
	// The holder's runtime may still touch a page between two reads: the
	// kept file is judged against /proc/PID/status when status read the
	// same just before and just after it.
	judged := false
	for try := 0; try < 50 && !judged; try++ {
		before := statusRSS(t, pid)
		again, ok := r.rss(pid)
		if after := statusRSS(t, pid); before == after {
			judged = true
			if !ok || again != before {
				t.Errorf("again %d (%v), status says %d", again, ok, before)
			}
		}
	}
	if !judged {
		t.Fatal("the holder's size changed between every two reads of its status (50 tries)")
	}
	h.stop()
	if _, ok := r.rss(pid); ok || len(r.statm) != 0 {
		t.Errorf("an ended process read as %v, %d files kept", ok, len(r.statm))
	}
}
