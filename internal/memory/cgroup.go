package memory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A memory cgroup per build gives the kernel's own account of the build:
// every page charged once, its peak even between two samples, and how
// many of its processes the OOM killer took. trt-action makes one below
// the cgroup it runs in, when the kernel lets it, and removes it at the
// build's end; where it cannot, the build is sampled from /proc alone.
//
// Cgroup v1 (the memory controller mounted on its own, as on this
// project's CI machines) has memory.max_usage_in_bytes and an oom_kill
// line in memory.oom_control (Linux 4.13+). Cgroup v2 (one unified
// hierarchy, as on GitHub-hosted Ubuntu 22.04 and 24.04 runners and
// current container hosts) has memory.peak (Linux 5.19+) and an oom_kill
// line in memory.events; its rule that a cgroup with processes of its own
// cannot hand controllers down to children means trt-action can make a
// build's cgroup only where the memory controller is already enabled for
// its cgroup's children (https://docs.kernel.org/admin-guide/cgroup-v2.html,
// "No Internal Process Constraint";
// https://docs.kernel.org/admin-guide/cgroup-v1/memory.html).

// Cgroup versions.
const (
	V1 = 1
	V2 = 2
)

// unlimited is at or above what the kernel writes for "no limit" in v1
// (PAGE_COUNTER_MAX pages in bytes, about 2^63).
const unlimited = int64(1) << 62

// groupPrefix begins the name of every cgroup trt-action makes:
// trt-action-PID-START-N, PID and START (its start time in clock ticks
// since boot, /proc/PID/stat field 22) naming the run that made it, so a
// later run knows one whose run is gone (a pid alone may be reused).
const groupPrefix = "trt-action-"

// Hierarchy is the memory cgroup this process runs in, where a build's
// cgroup is made.
type Hierarchy struct {
	Version int
	Dir     string // this process's cgroup folder
	Mount   string // where the hierarchy is mounted: walks up stop here
}

// DetectHierarchy finds this process's memory cgroup from
// /proc/self/cgroup and /proc/self/mountinfo. A v1 memory hierarchy wins
// over v2 (a hybrid system mounts both, with the memory controller on
// v1).
func DetectHierarchy() (Hierarchy, error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return Hierarchy{}, err
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return Hierarchy{}, err
	}
	return hierarchyFrom(string(cg), string(mi))
}

// mount is one cgroup mount of mountinfo.
type mount struct {
	root, point string
	v1Memory    bool
	v2          bool
}

func hierarchyFrom(cgroupFile, mountinfo string) (Hierarchy, error) {
	var v1Path, v2Path string
	v2Seen := false
	for _, line := range strings.Split(cgroupFile, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2Path, v2Seen = parts[2], true
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			v1Path = parts[2]
		}
	}
	var mounts []mount
	for _, line := range strings.Split(mountinfo, "\n") {
		if m, ok := parseMount(line); ok {
			mounts = append(mounts, m)
		}
	}
	for _, m := range mounts {
		if v1Path != "" && m.v1Memory {
			if dir, ok := under(m, v1Path); ok {
				return Hierarchy{Version: V1, Dir: dir, Mount: m.point}, nil
			}
		}
	}
	for _, m := range mounts {
		if v2Seen && m.v2 {
			if dir, ok := under(m, v2Path); ok {
				return Hierarchy{Version: V2, Dir: dir, Mount: m.point}, nil
			}
		}
	}
	return Hierarchy{}, errors.New("no memory cgroup hierarchy holds this process")
}

// parseMount reads one line of mountinfo: "36 25 0:31 / /sys/fs/cgroup/memory
// rw,nosuid - cgroup cgroup rw,memory" (proc(5)).
func parseMount(line string) (mount, bool) {
	before, after, ok := strings.Cut(line, " - ")
	if !ok {
		return mount{}, false
	}
	f, g := strings.Fields(before), strings.Fields(after)
	if len(f) < 5 || len(g) < 3 {
		return mount{}, false
	}
	m := mount{root: unescapeMount(f[3]), point: unescapeMount(f[4])}
	switch g[0] {
	case "cgroup":
		m.v1Memory = slices.Contains(strings.Split(g[2], ","), "memory")
	case "cgroup2":
		m.v2 = true
	default:
		return mount{}, false
	}
	return m, true
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// under is the folder of cgroup path in mount m, when m shows it (a
// container without its own cgroup namespace may see a host path its
// mount does not hold).
func under(m mount, path string) (string, bool) {
	rel, err := filepath.Rel(m.root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.Join(m.point, rel), true
}

// Group is one build's memory cgroup.
type Group struct {
	Version int
	Dir     string
}

// groupSeq numbers this process's cgroups.
var groupSeq atomic.Int64

// NewGroup makes a cgroup for one build below h's folder. Its error says
// why none could be made; the build then goes on without one.
func (h Hierarchy) NewGroup() (*Group, error) {
	if h.Version == V2 {
		if err := h.enableMemoryBelow(); err != nil {
			return nil, err
		}
	}
	start, _ := startTime(os.Getpid())
	name := fmt.Sprintf("%s%d-%d-%d", groupPrefix, os.Getpid(), start, groupSeq.Add(1))
	dir := filepath.Join(h.Dir, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot make a memory cgroup in %s: %w", h.Dir, unwrapPath(err))
	}
	return &Group{Version: h.Version, Dir: dir}, nil
}

// enableMemoryBelow makes sure v2's memory controller reaches cgroups made
// below h.Dir: it does where h.Dir's cgroup.subtree_control names it; else
// trt-action asks for it, which the kernel refuses where h.Dir has
// processes of its own (trt-action's, unless it runs in the root cgroup).
func (h Hierarchy) enableMemoryBelow() error {
	ctl := filepath.Join(h.Dir, "cgroup.subtree_control")
	data, err := os.ReadFile(ctl)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", ctl, unwrapPath(err))
	}
	if slices.Contains(strings.Split(strings.TrimSpace(string(data)), " "), "memory") {
		return nil
	}
	if err := writeFile(ctl, "+memory"); err != nil {
		return fmt.Errorf("the memory controller is not enabled below %s, and cannot be (%v): cgroup v2 lets no cgroup with processes of its own hand a controller down", h.Dir, unwrapPath(err))
	}
	return nil
}

// writeFile writes a cgroup interface file, which exists already.
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Add moves process pid, and so everything it starts from now on, into the
// group.
func (g *Group) Add(pid int) error {
	return writeFile(filepath.Join(g.Dir, "cgroup.procs"), strconv.Itoa(pid))
}

// PIDs lists the processes in the group.
func (g *Group) PIDs(buf []byte) []int {
	data, ok := readSmall(filepath.Join(g.Dir, "cgroup.procs"), buf)
	if !ok {
		return nil
	}
	var out []int
	for _, f := range bytes.Fields(data) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// Peak is the most memory the kernel charged to the group at once, page
// cache included; ok is false where the kernel does not keep it (v2
// before Linux 5.19).
func (g *Group) Peak() (int64, bool) {
	name := "memory.max_usage_in_bytes"
	if g.Version == V2 {
		name = "memory.peak"
	}
	return readInt(filepath.Join(g.Dir, name))
}

// OOMKills is how many of the group's processes the kernel's OOM killer
// ended; ok is false where the kernel does not count them (before Linux
// 4.13).
func (g *Group) OOMKills() (int64, bool) {
	name := "memory.oom_control"
	if g.Version == V2 {
		name = "memory.events"
	}
	return keyedInt(filepath.Join(g.Dir, name), "oom_kill")
}

// Remove removes the group once its processes are gone: a process that
// has just been killed can stay a moment in it.
func (g *Group) Remove() error {
	var err error
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err = unix.Rmdir(g.Dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("cannot remove the memory cgroup %s: %w", g.Dir, err)
		}
	}
}

// Sweep removes the cgroups that runs which are gone left below h.Dir (a
// run killed with SIGKILL, or by the OOM killer, removes none of its own)
// and returns their folders. One with a process in it, or whose run is
// alive, is left alone.
func (h Hierarchy) Sweep() []string {
	entries, err := os.ReadDir(h.Dir)
	if err != nil {
		return nil
	}
	var removed []string
	buf := make([]byte, 4096)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), groupPrefix) {
			continue
		}
		pid, start, ok := groupOwner(e.Name())
		if !ok || runAlive(pid, start) {
			continue
		}
		g := Group{Version: h.Version, Dir: filepath.Join(h.Dir, e.Name())}
		if len(g.PIDs(buf)) > 0 {
			continue
		}
		if unix.Rmdir(g.Dir) == nil {
			removed = append(removed, g.Dir)
		}
	}
	return removed
}

// groupOwner reads the run's pid and start time from a group's name.
func groupOwner(name string) (pid int, start uint64, ok bool) {
	parts := strings.Split(strings.TrimPrefix(name, groupPrefix), "-")
	if len(parts) != 3 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	return pid, start, err1 == nil && err2 == nil
}

// runAlive reports whether the process that made a group still runs: its
// pid is in use by a process that started when it did.
func runAlive(pid int, start uint64) bool {
	now, ok := startTime(pid)
	return ok && now == start
}

// startTime is a process's start time in clock ticks since boot
// (/proc/PID/stat field 22).
func startTime(pid int) (uint64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(data[i+1:])
	const startField = 22 - 3 // fields after the name begin at field 3
	if len(fields) <= startField {
		return 0, false
	}
	v, err := strconv.ParseUint(string(fields[startField]), 10, 64)
	return v, err == nil
}

// Headroom is how much memory the cgroups from dir up to the mount let
// their processes still use: the least, over those with a limit, of the
// limit less what they use (page cache the kernel can drop, the inactive
// file pages, not counted as used), and that limit. ok is false when none
// has a limit.
func (h Hierarchy) Headroom(dir string) (free, limit int64, ok bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if l, used, has := h.limitOf(d); has {
			if f := max(l-used, 0); !ok || f < free {
				free, limit, ok = f, l, true
			}
		}
		if d == h.Mount || len(d) <= len(h.Mount) || d == "/" {
			return free, limit, ok
		}
	}
}

// limitOf is one cgroup's limit and what it uses; has is false for one
// without a limit.
func (h Hierarchy) limitOf(dir string) (limit, used int64, has bool) {
	limitFile, usageFile, inactive := "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"
	if h.Version == V2 {
		limitFile, usageFile, inactive = "memory.max", "memory.current", "inactive_file"
	}
	limit, ok := readInt(filepath.Join(dir, limitFile))
	if !ok || limit >= unlimited {
		return 0, 0, false
	}
	used, _ = readInt(filepath.Join(dir, usageFile))
	if cache, ok := keyedInt(filepath.Join(dir, "memory.stat"), inactive); ok {
		used = max(used-cache, 0)
	}
	return limit, used, true
}

// readInt reads a file holding one number ("max" is unlimited).
func readInt(path string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return unlimited, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// keyedInt reads the number after key in a file of "key value" lines.
func keyedInt(path, key string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	in := bufio.NewScanner(f)
	for in.Scan() {
		k, v, ok := strings.Cut(in.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
