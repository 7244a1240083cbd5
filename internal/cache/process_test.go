package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Tests that need other processes run this test binary again with
// helperVar set: TestMain then runs the named helper instead of the tests.
const helperVar = "TRT_ACTION_CACHE_TEST_HELPER"

func TestMain(m *testing.M) {
	if name := os.Getenv(helperVar); name != "" {
		if err := helpers[name](os.Args[len(os.Args)-1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var helpers = map[string]func(arg string) error{
	"race":      raceHelper,
	"read-only": readOnlyHelper,
	"fsize":     fsizeHelper,
}

// helper starts this test binary as the named helper with arg.
func helper(t *testing.T, name, arg string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", arg)
	cmd.Env = append(os.Environ(), helperVar+"="+name)
	return cmd
}

// raceKeys are the entries the racing processes store and fetch.
var raceKeys = []string{"r0", "r1", "r2", "r3", "r4", "r5"}

const raceEngineSize = 256 << 10

// raceHelper stores and fetches every race key many times into one cache
// folder (with a max-size that keeps evicting), and fails on any corrupt
// entry or engine that is not the one stored.
func raceHelper(dir string) error {
	c, err := Open(Options{Dir: filepath.Join(dir, "cache"), MaxSize: 4 * raceEngineSize})
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp(dir, "proc-")
	if err != nil {
		return err
	}
	for round := range 20 {
		for _, word := range raceKeys {
			eng := filepath.Join(work, word+".built")
			if err := os.WriteFile(eng, engineBytes(word, raceEngineSize), 0o644); err != nil {
				return err
			}
			if _, err := c.Store(testKey(word), eng, Entry{Build: word}); err != nil {
				return fmt.Errorf("round %d: Store %s: %w", round, word, err)
			}
			dest := filepath.Join(work, word+".engine")
			e, hit, err := c.Fetch(testKey(word), dest)
			if err != nil {
				return fmt.Errorf("round %d: Fetch %s: %w", round, word, err)
			}
			if !hit {
				continue // evicted by the other process meanwhile
			}
			got, err := os.ReadFile(dest)
			if err != nil {
				return err
			}
			if e.Build != word || !bytes.Equal(got, engineBytes(word, raceEngineSize)) {
				return fmt.Errorf("round %d: Fetch %s gave the engine of %s (%d bytes)", round, word, e.Build, len(got))
			}
		}
	}
	return nil
}

// TestTwoProcessesRacing: processes storing, fetching and evicting the same
// keys in one folder at once never see a corrupt or wrong entry, and leave
// none behind.
func TestTwoProcessesRacing(t *testing.T) {
	dir := t.TempDir()
	var cmds []*exec.Cmd
	outs := make([]*bytes.Buffer, 3)
	for i := range outs {
		outs[i] = &bytes.Buffer{}
		cmd := helper(t, "race", dir)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, outs[i])
		}
	}
	c := openCache(t, filepath.Join(dir, "cache"), 0)
	_, bad, err := c.Verify()
	if err != nil || len(bad) > 0 {
		t.Errorf("Verify after the race: %v, %v", bad, err)
	}
	if staged, _ := os.ReadDir(filepath.Join(c.root, tmpName)); len(staged) != 0 {
		t.Errorf("staging left behind: %v", staged)
	}
}

// readOnlyResult is what the read-only helper saw.
type readOnlyResult struct {
	ReadOnly   bool
	Hit        bool
	FetchError string
	Engine     string
	StoreError string
	IsReadOnly bool
}

// readOnlyHelper opens a cache it cannot write and tries a fetch and a store.
func readOnlyHelper(dir string) error {
	var r readOnlyResult
	c, err := Open(Options{Dir: filepath.Join(dir, "cache")})
	if err != nil {
		return err
	}
	r.ReadOnly = c.ReadOnly()
	dest := filepath.Join(dir, "out", "mlp.engine")
	_, r.Hit, err = c.Fetch(testKey("mlp"), dest)
	if err != nil {
		r.FetchError = err.Error()
	}
	got, _ := os.ReadFile(dest)
	r.Engine = string(got)
	_, err = c.Store(testKey("new"), dest, Entry{})
	r.IsReadOnly = errors.Is(err, ErrReadOnly)
	if err != nil {
		r.StoreError = err.Error()
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// TestReadOnlyCache: a cache folder this process cannot write opens
// read-only; hits work (copied, since a hard link to another user's file
// is refused), nothing is stored and the entry's last use stays. Tests run
// as root here, whom permission bits do not stop, so as root the helper
// runs as user nobody; otherwise the folder is made read-only.
func TestReadOnlyCache(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, filepath.Join(dir, "cache"), 0)
	k := store(t, c, "mlp", 300)
	meta := filepath.Join(c.entryDir(k), metaName)
	before, _ := os.Stat(meta)
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := helper(t, "read-only", dir)
	if os.Geteuid() == 0 {
		// nobody must reach the folder: t.TempDir's folders are 0700.
		for p := dir; p != filepath.Dir(os.TempDir()); p = filepath.Dir(p) {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(filepath.Join(dir, "out"), 0o777); err != nil {
			t.Fatal(err)
		}
		// Nor the test binary, in go test's 0700 build folder: run a copy.
		exe := filepath.Join(dir, "cache.test")
		if err := exec.Command("cp", os.Args[0], exe).Run(); err != nil {
			t.Fatal(err)
		}
		cmd.Path, cmd.Args[0] = exe, exe
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		if err := filepath.Walk(filepath.Join(dir, "cache"), func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() {
				err = os.Chmod(p, 0o555)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", dir).Run() })
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	var r readOnlyResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("helper said %q: %v", out, err)
	}
	if !r.ReadOnly || !r.Hit || r.FetchError != "" || r.Engine != string(engineBytes("mlp", 300)) {
		t.Errorf("fetch from a read-only cache: %+v", r)
	}
	if !r.IsReadOnly || !strings.Contains(r.StoreError, "read-only") {
		t.Errorf("store into a read-only cache: %+v", r)
	}
	if _, err := os.Stat(c.entryDir(testKey("new"))); !os.IsNotExist(err) {
		t.Error("a read-only cache got an entry")
	}
	if after, _ := os.Stat(meta); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a read-only fetch changed the entry's last use")
	}
}

// fsizeHelper stores an engine with the file size limited to less than
// it: as a full disk does, the write fails part way.
func fsizeHelper(dir string) error {
	c, err := Open(Options{Dir: filepath.Join(dir, "cache")})
	if err != nil {
		return err
	}
	eng := filepath.Join(dir, "big.engine")
	if err := os.WriteFile(eng, engineBytes("big", 1<<20), 0o644); err != nil {
		return err
	}
	limit := uint64(64 << 10)
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
		return err
	}
	_, err = c.Store(testKey("big"), eng, Entry{})
	fmt.Print(strconv.Quote(fmt.Sprint(err)))
	return nil
}

// TestStoreCleansUpAfterAFailedWrite: a store that cannot write all of the
// engine returns an error and leaves neither an entry nor staging behind.
func TestStoreCleansUpAfterAFailedWrite(t *testing.T) {
	dir := t.TempDir()
	out, err := helper(t, "fsize", dir).Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	msg, _ := strconv.Unquote(string(out))
	if !strings.Contains(msg, "not stored") || !strings.Contains(msg, "file too large") {
		t.Errorf("Store's error: %q", msg)
	}
	c := openCache(t, filepath.Join(dir, "cache"), 0)
	if _, err := os.Stat(c.entryDir(testKey("big"))); !os.IsNotExist(err) {
		t.Error("a failed store left an entry")
	}
	if staged, _ := os.ReadDir(filepath.Join(c.root, tmpName)); len(staged) != 0 {
		t.Errorf("a failed store left staging: %v", staged)
	}
}
