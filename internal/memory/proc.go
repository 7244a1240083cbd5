package memory

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// procFS reads processes from a /proc folder: the real /proc, or a
// layout a test writes.
//
// A tree without a cgroup of its own is found from one scan of /proc a
// look, shared by every build: the parent of each process. Walking down
// from the tree's root through /proc/PID/task/TID/children (where the
// kernel has them) costs a directory and a file a process and thread, at
// every look, 6 times the scan's cost for a tree of 300 processes
// (BENCHMARKS.md#memory-sampling); the scan reads the parent of a process
// once, when it first sees it.
type procFS struct {
	root string
	page int64 // bytes a page
}

func newProcFS(root string) procFS {
	return procFS{root: root, page: int64(os.Getpagesize())}
}

// readSmall reads a small /proc file into buf without the allocations
// os.ReadFile makes: a sampler reads hundreds of them a look.
func readSmall(path string, buf []byte) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	if err != nil || n <= 0 {
		return nil, false
	}
	return buf[:n], true
}

// rss is a process's resident size in bytes, from /proc/PID/statm (its
// second field, in pages): the kernel keeps it as counters, so reading it
// costs the same for a process of 30 GB as for one of 30 MB, where
// smaps_rollup (which has PSS) walks the process's page tables. ok is
// false for a process that is gone.
func (p procFS) rss(pid int, buf []byte) (int64, bool) {
	data, ok := readSmall(p.root+"/"+strconv.Itoa(pid)+"/statm", buf)
	if !ok {
		return 0, false
	}
	return p.residentOf(data)
}

// residentOf reads statm's second field, in pages, as bytes.
func (p procFS) residentOf(statm []byte) (int64, bool) {
	i := bytes.IndexByte(statm, ' ')
	if i < 0 {
		return 0, false
	}
	var pages int64
	digits := 0
	for _, c := range statm[i+1:] {
		if c < '0' || c > '9' {
			break
		}
		pages = pages*10 + int64(c-'0')
		digits++
	}
	return pages * p.page, digits > 0
}

// reader is what the monitor keeps between looks, so a look costs one
// system call a process: each process's statm open (a pread of an open
// /proc file costs a quarter of an open, read and close), and every
// process's parent (which changes only when its parent dies: its
// children are then reparented, and reading them again would find the
// same tree, as the dead parent is gone from it). One goroutine uses it.
type reader struct {
	fs      procFS
	statm   map[int]int // pid -> open statm
	parents map[int]int // pid -> parent, from the last scan
	buf     []byte
}

// maxOpenStatm bounds the statm files kept open; past it they are opened
// for each read.
const maxOpenStatm = 2048

func newReader(fs procFS) *reader {
	return &reader{fs: fs, statm: map[int]int{}, parents: map[int]int{}, buf: make([]byte, 64<<10)}
}

// rss reads pid's resident size through its kept statm.
func (r *reader) rss(pid int) (int64, bool) {
	fd, open := r.statm[pid]
	if !open {
		if len(r.statm) >= maxOpenStatm {
			return r.fs.rss(pid, r.buf)
		}
		var err error
		fd, err = unix.Open(r.fs.root+"/"+strconv.Itoa(pid)+"/statm", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, false
		}
		r.statm[pid] = fd
	}
	n, err := unix.Pread(fd, r.buf, 0)
	if err != nil || n <= 0 { // the process is gone: its pid may come back as another's
		unix.Close(fd)
		delete(r.statm, pid)
		return 0, false
	}
	return r.fs.residentOf(r.buf[:n])
}

// forget closes the statm of every process not in keep.
func (r *reader) forget(keep map[int]bool) {
	for pid, fd := range r.statm {
		if !keep[pid] {
			unix.Close(fd)
			delete(r.statm, pid)
		}
	}
}

// close closes every kept file.
func (r *reader) close() { r.forget(nil) }

// scan is every process's children, reading the parent of only the
// processes the last scan did not see.
func (r *reader) scan() table {
	f, err := os.Open(r.fs.root)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	t := make(table, len(names))
	seen := make(map[int]int, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		ppid, known := r.parents[pid]
		if !known {
			var ok bool
			if ppid, _, ok = r.fs.parentOf(pid, r.buf); !ok {
				continue
			}
		}
		seen[pid] = ppid
		t[ppid] = append(t[ppid], pid)
	}
	r.parents = seen
	return t
}

// parentOf reads a process's parent and state from /proc/PID/stat. The
// command name (field 2) may hold spaces and parentheses, so the fields
// after it are found from its last ')'.
func (p procFS) parentOf(pid int, buf []byte) (ppid int, state byte, ok bool) {
	data, ok := readSmall(p.root+"/"+strconv.Itoa(pid)+"/stat", buf)
	if !ok {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	return ppid, fields[0][0], err == nil
}

// table is every process's children, from one scan of /proc; zombies
// are left out (they hold no memory) but their children are kept.
type table map[int][]int

// scan reads the parent of every process of the machine.
func (p procFS) scan(buf []byte) table {
	f, err := os.Open(p.root)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	t := make(table, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if ppid, _, ok := p.parentOf(pid, buf); ok {
			t[ppid] = append(t[ppid], pid)
		}
	}
	return t
}

// below lists root's descendants in t (not root itself).
func (t table) below(root int) []int {
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range t[pid] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
