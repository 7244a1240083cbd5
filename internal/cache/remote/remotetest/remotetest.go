// Package remotetest starts the real servers the tests of the shared engine
// cache run against, on 127.0.0.1 only, each stopped by the test that
// started it: the CNCF Distribution registry (Debian's docker-registry),
// plain or with TLS and basic auth (StartRegistry); Versity's S3 gateway
// (StartS3, built by scripts/setup-test-servers); a store of either kind
// on one of them, as every test of the shared cache uses one (Store:
// StartOCIStore, StartS3Store, EachStore); and a proxy between a client
// and either that injects faults at the test's command (StartProxy).
// No protocol is mocked. A server whose program is missing skips the test,
// except under CI (CI set, or TRT_ACTION_REQUIRE_RTX=1 as make test sets),
// where it fails: .ci/run installs them. Only tests import this package.
package remotetest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Need skips the test for want of what (a program it needs, as how says to
// get it), except under CI, where every test must run and it fails.
func Need(t testing.TB, what, how string) {
	t.Helper()
	if os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_REQUIRE_RTX") == "1" {
		t.Fatalf("%s is missing (%s); under CI this test must run", what, how)
	}
	t.Skipf("%s is missing (%s)", what, how)
}

// Env is an environment for remote.Options.Getenv: the variables a test
// gives, and no others (not the process's).
type Env map[string]string

// Getenv is Env's value of name.
func (e Env) Getenv(name string) string { return e[name] }

// With is a copy of e with name set to value.
func (e Env) With(name, value string) Env {
	out := Env{name: value}
	for k, v := range e {
		if k != name {
			out[k] = v
		}
	}
	return out
}

// secret is a random string of n bytes in hex: a password, a key.
func secret(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// freePort is a port on 127.0.0.1 that nothing listened on a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Bounded waits: how long a server may take to listen, and to die.
const (
	startWait = 30 * time.Second
	stopWait  = 10 * time.Second
)

// process is a server program the test runs, restartable, killed at the
// test's end.
type process struct {
	name string
	argv []string
	addr string // where it listens: started when a connection is accepted there

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	out  *tail
}

// start starts p and waits until it listens, up to startWait: false (with
// the reason) when it exited first, or did not listen in time.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	p.out = &tail{}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	// Its own process group, so a test's kill reaches nothing else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
	deadline := time.Now().Add(startWait)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("%s exited before it listened on %s: %s", p.name, p.addr, p.out)
		default:
		}
		if c, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.killLocked()
	return fmt.Errorf("%s did not listen on %s within %s: %s", p.name, p.addr, startWait, p.out)
}

// kill kills p with SIGKILL, as a crash would, and waits for it (up to
// stopWait).
func (p *process) kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killLocked()
}

func (p *process) killLocked() error {
	if p.cmd == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	default:
	}
	p.cmd.Process.Kill()
	select {
	case <-p.done:
		return nil
	case <-time.After(stopWait):
		return fmt.Errorf("%s (pid %d) did not die within %s of SIGKILL", p.name, p.cmd.Process.Pid, stopWait)
	}
}

// Output is what the process wrote last (for a failing test's message).
func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out == nil {
		return ""
	}
	return p.out.String()
}

// startOn starts the process that argv makes for a port, on a free port,
// and has it killed at the test's end. A port taken meanwhile by another
// process is tried again on another, twice.
func startOn(t testing.TB, name string, argv func(port int) []string) *process {
	t.Helper()
	var err error
	for range 3 {
		port := freePort(t)
		p := &process{name: name, argv: argv(port), addr: "127.0.0.1:" + strconv.Itoa(port)}
		if err = p.start(); err == nil {
			t.Cleanup(func() {
				if err := p.kill(); err != nil {
					t.Error(err)
				}
			})
			return p
		}
	}
	t.Fatal(err)
	return nil
}

// tail keeps the last 16 KiB written to it.
type tail struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

const tailBytes = 16 << 10

func (w *tail) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if over := w.buf.Len() - tailBytes; over > 0 {
		w.buf.Next(over)
	}
	return len(b), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// lookPath finds a program on PATH, else at the path the variable names.
func lookPath(program, variable string) (string, error) {
	if v := os.Getenv(variable); v != "" {
		if _, err := os.Stat(v); err != nil {
			return "", fmt.Errorf("%s names %s: %w", variable, v, err)
		}
		return v, nil
	}
	p, err := exec.LookPath(program)
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("%s is not on PATH and %s is not set", program, variable)
	}
	return p, err
}
