package memory

import (
	"os"
	"strconv"
	"strings"
)

// Room is how much memory the builds can still have: the machine's
// available memory (MemAvailable: free memory and what the kernel can
// reclaim without swapping, /proc/meminfo), or, inside a cgroup with a
// limit (a container, a runner's job), that limit less what it uses,
// whichever is smaller. Total is what Free is out of: the machine's
// memory, or the limit.
type Room struct {
	Free  int64
	Total int64
}

// FreePercent is Free as a share of Total, in percent.
func (r Room) FreePercent() float64 {
	if r.Total <= 0 {
		return 100
	}
	return float64(r.Free) * 100 / float64(r.Total)
}

// Machine reads the room the machine and this process's cgroup leave.
type Machine struct {
	meminfo string     // /proc/meminfo, or a test's file
	cgroups *Hierarchy // this process's memory cgroup; nil when not found
}

// NewMachine reads /proc/meminfo and this process's memory cgroup.
func NewMachine() *Machine {
	m := &Machine{meminfo: "/proc/meminfo"}
	if h, err := DetectHierarchy(); err == nil {
		m.cgroups = &h
	}
	return m
}

// MachineReading is a Machine that reads meminfo (a file laid out as
// /proc/meminfo) and no cgroup: for tests of what little room does.
func MachineReading(meminfo string) *Machine { return &Machine{meminfo: meminfo} }

// Hierarchy is the memory cgroup this process runs in; nil when none was
// found.
func (m *Machine) Hierarchy() *Hierarchy { return m.cgroups }

// Room reads what is free now; ok is false where /proc/meminfo cannot
// be read.
func (m *Machine) Room() (Room, bool) {
	info, err := os.ReadFile(m.meminfo)
	if err != nil {
		return Room{}, false
	}
	total, ok1 := meminfoBytes(info, "MemTotal")
	avail, ok2 := meminfoBytes(info, "MemAvailable")
	if !ok1 || !ok2 {
		return Room{}, false
	}
	r := Room{Free: avail, Total: total}
	if h := m.cgroups; h != nil {
		if free, limit, ok := h.Headroom(h.Dir); ok {
			if free < r.Free {
				r.Free = free
			}
			if limit < r.Total {
				r.Total = limit
			}
		}
	}
	return r, true
}

// meminfoBytes reads one line of /proc/meminfo ("MemAvailable: 123 kB").
func meminfoBytes(data []byte, key string) (int64, bool) {
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		return n, true
	}
	return 0, false
}

// OOMScoreAdj is the oom_score_adj trt-action gives the processes of a
// build (the worker, a script build's reaper and so its command). The
// kernel's OOM killer picks the process with the highest score, about a
// thousandth of memory per point of the process's share of it plus
// oom_score_adj (-1000 to 1000; proc(5)). +500 puts a build ahead of any
// process left at 0, such as a runner's agent or trt-action's own
// supervisor, unless that process holds half of the memory more than the
// build does; a build's processes among themselves are still ranked by
// size, so the largest goes first. +1000 would make even a build's
// smallest helper go before an agent that has run away.
const OOMScoreAdj = 500

// RaiseOOMScore sets process pid's oom_score_adj to OOMScoreAdj unless it
// is that or higher already (lowering it needs CAP_SYS_RESOURCE, and would
// undo what whoever started trt-action asked for).
func RaiseOOMScore(pid int) error {
	path := "/proc/" + strconv.Itoa(pid) + "/oom_score_adj"
	if now, ok := readInt(path); ok && now >= OOMScoreAdj {
		return nil
	}
	return writeFile(path, strconv.Itoa(OOMScoreAdj))
}

// OOMKillsOnMachine is how many processes the OOM killer has ended since
// boot, on the whole machine (/proc/vmstat oom_kill, Linux 4.13+). A
// build that died of SIGKILL while it grew is told from one a person
// killed by this count having grown meanwhile, where no cgroup of its
// own counts for it.
func OOMKillsOnMachine() (int64, bool) {
	data, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
