package memory

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the processes the tests measure: with
// MEMTEST_HOLD=N it touches N MiB, starts MEMTEST_CHILDREN copies of
// itself doing the same, prints "ready" once they all are, and holds
// until its stdin closes.
func TestMain(m *testing.M) {
	if mib := os.Getenv("MEMTEST_HOLD"); mib != "" {
		hold(mib)
		return
	}
	os.Exit(m.Run())
}

func hold(mib string) {
	in := bufio.NewReader(os.Stdin)
	if os.Getenv("MEMTEST_GATE") != "" {
		_, _ = in.ReadString('\n') // put in a cgroup first
	}
	n, _ := strconv.Atoi(mib)
	block := make([]byte, n<<20)
	for i := 0; i < len(block); i += 4096 {
		block[i] = 1
	}
	children, _ := strconv.Atoi(os.Getenv("MEMTEST_CHILDREN"))
	var stdins []io.Closer
	for range children {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "MEMTEST_CHILDREN=0")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
			panic("child not ready: " + line)
		}
		stdins = append(stdins, in)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, in)
	for _, in := range stdins {
		in.Close()
	}
	block[0]++ // keep it alive until here
	time.Sleep(50 * time.Millisecond)
}

// holder is a tree of test processes holding memory.
type holder struct {
	cmd *exec.Cmd
	in  io.WriteCloser
}

// startHolder starts a process touching mib MiB with children doing the
// same, and waits until they all have.
func startHolder(t *testing.T, mib, children int) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MEMTEST_HOLD="+strconv.Itoa(mib), "MEMTEST_CHILDREN="+strconv.Itoa(children))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, in: in}
	t.Cleanup(h.stop)
	if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "ready" {
		t.Fatalf("holder not ready: %q", line)
	}
	return h
}

func (h *holder) stop() {
	h.in.Close()
	_ = h.cmd.Wait()
}

// statusRSS reads a process's VmRSS from /proc/PID/status, as ps and top
// show it: another reading of the kernel's counters than statm's.
func statusRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS for %d", pid)
	return 0
}

// startHolderIn starts a process that touches mib MiB once it is in g.
func startHolderIn(t *testing.T, g *Group, mib int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MEMTEST_HOLD="+strconv.Itoa(mib), "MEMTEST_GATE=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Process.Kill() })
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(in, "go\n"); err != nil {
		t.Fatal(err)
	}
	return cmd
}
