package memory

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// This machine's layout: cgroup v1 controllers each on its own mount,
// and an empty cgroup2 beside them (a hybrid): the memory controller is
// v1's.
func TestHierarchyHybridPicksV1Memory(t *testing.T) {
	cg := "9:name=systemd:/\n4:memory:/process_api/30bc\n0::/\n"
	mi := "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	h, err := hierarchyFrom(cg, mi)
	if err != nil || h != (Hierarchy{Version: V1, Dir: "/sys/fs/cgroup/memory/process_api/30bc", Mount: "/sys/fs/cgroup/memory"}) {
		t.Errorf("hierarchy = %+v, %v", h, err)
	}
}

// GitHub-hosted runners: cgroup v2 alone.
func TestHierarchyV2(t *testing.T) {
	cg := "0::/system.slice/runner-provisioner.service\n"
	mi := "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	h, err := hierarchyFrom(cg, mi)
	if err != nil || h != (Hierarchy{Version: V2, Dir: "/sys/fs/cgroup/system.slice/runner-provisioner.service", Mount: "/sys/fs/cgroup"}) {
		t.Errorf("hierarchy = %+v, %v", h, err)
	}
}

// A container that sees its host's cgroup path but mounts only its own
// part of the hierarchy has no folder for it; one with its own cgroup
// namespace sees "/" and its mount's root.
func TestHierarchyInContainers(t *testing.T) {
	mi := "600 590 0:26 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw\n"
	if h, err := hierarchyFrom("0::/system.slice/other\n", mi); err == nil {
		t.Errorf("hierarchy = %+v, want none", h)
	}
	h, err := hierarchyFrom("0::/docker/abc/inner\n", mi)
	if err != nil || h.Dir != "/sys/fs/cgroup/inner" {
		t.Errorf("hierarchy = %+v, %v", h, err)
	}
	mi = "600 590 0:26 / /sys/fs/cgroup\\040x ro - cgroup2 cgroup2 rw\n"
	if h, err := hierarchyFrom("0::/\n", mi); err != nil || h.Dir != "/sys/fs/cgroup x" {
		t.Errorf("escaped mount point: %+v, %v", h, err)
	}
}

// v2, against the folders and files the kernel would show: a build's
// cgroup is made below trt-action's (after asking for the memory
// controller below it), the build is put in it, and its peak and OOM
// kills are read from memory.peak and memory.events. There is no v2
// memory controller on this project's machines, so the test writes the
// layout and plays the kernel's part.
func TestGroupV2Layout(t *testing.T) {
	mount := t.TempDir()
	self := filepath.Join(mount, "job")
	must(t, os.MkdirAll(self, 0o755))
	write := func(dir, name, content string) {
		t.Helper()
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write(self, "cgroup.subtree_control", "cpu io\n")
	h := Hierarchy{Version: V2, Dir: self, Mount: mount}
	g, err := h.NewGroup()
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(self, "cgroup.subtree_control")); string(data) != "+memory" {
		t.Errorf("subtree_control got %q, want the memory controller asked for", data)
	}
	if !strings.HasPrefix(filepath.Base(g.Dir), "trt-action-"+strconv.Itoa(os.Getpid())+"-") || filepath.Dir(g.Dir) != self {
		t.Errorf("group at %s", g.Dir)
	}
	// The kernel's part: the interface files of the new cgroup.
	write(g.Dir, "cgroup.procs", "")
	write(g.Dir, "memory.peak", "734003200\n")
	write(g.Dir, "memory.events", "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n")
	must(t, g.Add(4242))
	if pids := g.PIDs(make([]byte, 4096)); !slices.Equal(pids, []int{4242}) {
		t.Errorf("pids = %v", pids)
	}
	if peak, ok := g.Peak(); !ok || peak != 734003200 {
		t.Errorf("peak = %d, %v", peak, ok)
	}
	if kills, ok := g.OOMKills(); !ok || kills != 1 {
		t.Errorf("oom kills = %d, %v", kills, ok)
	}
	// Headroom: the tightest limit from the group up, with the inactive
	// file cache not counted as used; "max" is no limit.
	write(g.Dir, "memory.max", "max\n")
	write(self, "memory.max", "8589934592\n")
	write(self, "memory.current", "6442450944\n")
	write(self, "memory.stat", "anon 1\nfile 2\ninactive_file 1073741824\n")
	free, limit, ok := h.Headroom(g.Dir)
	if !ok || limit != 8<<30 || free != 3<<30 {
		t.Errorf("headroom = %d of %d, %v; want 3 GiB of 8 GiB", free, limit, ok)
	}
	// Where the memory controller cannot be handed down, no group.
	other := filepath.Join(mount, "busy")
	must(t, os.MkdirAll(filepath.Join(other, "cgroup.subtree_control"), 0o755)) // a write fails, as the kernel's refusal does
	if _, err := (Hierarchy{Version: V2, Dir: other, Mount: mount}).NewGroup(); err == nil {
		t.Error("a group was made where the memory controller is not enabled")
	}
}

// v1Hierarchy is this machine's own memory cgroup, where a test may make
// groups (root can, with the v1 controller): the way trt-action makes
// them. Under CI it must be there.
func v1Hierarchy(t *testing.T) Hierarchy {
	t.Helper()
	h, err := DetectHierarchy()
	why := ""
	switch {
	case err != nil:
		why = err.Error()
	case h.Version != V1:
		why = "the memory controller is cgroup v2's here"
	case os.Geteuid() != 0:
		why = "not root: no cgroup can be made"
	}
	if why != "" {
		if os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" {
			t.Fatalf("a writable cgroup v1 memory hierarchy is needed: %s", why)
		}
		t.Skip(why)
	}
	return h
}

// A real v1 group: a process tree is put in it, the kernel's peak covers
// what it touched, and a limit below what a process wants ends it by the
// OOM killer, which the group counts.
func TestGroupV1Kernel(t *testing.T) {
	h := v1Hierarchy(t)
	g, err := h.NewGroup()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Remove(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(g.Dir); !os.IsNotExist(err) {
			t.Errorf("group left: %v", err)
		}
	}()
	// The group goes first, then the process: its 64 MiB are charged to it.
	must(t, writeFile(filepath.Join(g.Dir, "memory.limit_in_bytes"), strconv.Itoa(48<<20)))
	cmdStarted := startHolderIn(t, g, 96)
	if err := cmdStarted.Wait(); err == nil {
		t.Fatal("the holder outlived its limit")
	}
	if kills, ok := g.OOMKills(); !ok || kills != 1 {
		t.Errorf("oom kills = %d, %v", kills, ok)
	}
	if peak, ok := g.Peak(); !ok || peak < 40<<20 {
		t.Errorf("peak = %d, %v; want about the limit", peak, ok)
	}
	free, limit, ok := h.Headroom(g.Dir)
	if !ok || limit != 48<<20 || free < 0 || free > 48<<20 {
		t.Errorf("headroom = %d of %d, %v", free, limit, ok)
	}
}

// Leftovers of runs that are gone are swept; a live run's, and one with a
// process in it, are not.
func TestSweepRemovesDeadRunsGroups(t *testing.T) {
	h := v1Hierarchy(t)
	mine, err := h.NewGroup()
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Remove()
	dead := filepath.Join(h.Dir, groupPrefix+"999999999-1-1") // no such pid
	must(t, os.Mkdir(dead, 0o755))
	defer os.Remove(dead)
	busy := &Group{Version: V1, Dir: filepath.Join(h.Dir, groupPrefix+"999999998-1-1")}
	must(t, os.Mkdir(busy.Dir, 0o755))
	holder := startHolder(t, 1, 0)
	must(t, busy.Add(holder.cmd.Process.Pid))
	removed := h.Sweep()
	if !slices.Contains(removed, dead) || slices.Contains(removed, mine.Dir) || slices.Contains(removed, busy.Dir) {
		t.Errorf("swept %v", removed)
	}
	holder.stop()
	// An exited process leaves its cgroup a moment after it is reaped.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if removed := h.Sweep(); slices.Contains(removed, busy.Dir) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not swept once its process ended (processes %v)", busy.Dir, busy.PIDs(make([]byte, 4096)))
		}
	}
}
