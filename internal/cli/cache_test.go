package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/text"
)

const cacheMatrix = `version: 1
cache: {dir: .trt-cache, max-size: 1GiB}
builds:
  - {name: a, backend: sim, sim: {step: 0s}}
  - {name: b, backend: sim, sim: {step: 0s, threads: 2}}
`

var runKey = regexp.MustCompile(`^trt-engines-v[0-9]+-[a-z0-9]+-[a-z0-9]+-[0-9a-f]{64}\n$`)

func runCacheCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	c, out, errb := userCommand("")
	code := c.Main(append([]string{"cache"}, args...))
	return code, out.String(), errb.String()
}

func TestCacheKey(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": cacheMatrix,
		"renamed.yml":   strings.ReplaceAll(cacheMatrix, "name: a,", "name: renamed,"),
		"changed.yml":   strings.Replace(cacheMatrix, "threads: 2", "threads: 3", 1),
		"reordered.yml": "version: 1\nbuilds:\n  - {name: b, backend: sim, sim: {threads: 2, step: 0s}}\n  - {name: a, backend: sim, sim: {step: 0s}}\n"})
	code, key, errb := runCacheCommand(t, "key")
	if code != ExitOK || !runKey.MatchString(key) {
		t.Fatalf("cache key: exit %d, %q %s", code, key, errb)
	}
	for file, same := range map[string]bool{"renamed.yml": true, "reordered.yml": true, "changed.yml": false} {
		_, other, _ := runCacheCommand(t, "key", "-f", file)
		if (other == key) != same {
			t.Errorf("cache key -f %s: %q, first %q; want same %v", file, other, key, same)
		}
	}
	_, prefix, _ := runCacheCommand(t, "key", "--prefix")
	if !strings.HasPrefix(key, strings.TrimSpace(prefix)) || !strings.HasSuffix(strings.TrimSpace(prefix), "-") {
		t.Errorf("--prefix %q does not start the key %q", prefix, key)
	}
	_, only, _ := runCacheCommand(t, "key", "--only", "a")
	if only == key || !runKey.MatchString(only) {
		t.Errorf("--only a: %q, the whole matrix's %q", only, key)
	}
}

// Builds with run: without inputs: are never cached: cache key leaves
// them out, says so on stderr (stdout is the key alone, for $(...)) and
// exits 0, also when every build it was asked for has run:. Their
// backend's library is not asked for (here there is none to find).
func TestCacheKeyLeavesOutScripts(t *testing.T) {
	t.Setenv("TRT_ACTION_TRT_LIB", t.TempDir())
	withScripts := cacheMatrix + "  - {name: s, backend: tensorrt, run: python build.py, engine: s.engine}\n"
	inDir(t, map[string]string{"trt-builds.yml": cacheMatrix, "scripts.yml": withScripts})
	_, key, _ := runCacheCommand(t, "key")
	code, got, errb := runCacheCommand(t, "key", "-f", "scripts.yml")
	if code != ExitOK || got != key || errb != "trt-action: cache key: 1 build left out (s): builds with run: are cached only when they declare their inputs (inputs:)\n" {
		t.Errorf("exit %d, key %q (without the script %q), stderr %q", code, got, key, errb)
	}
	code, got, errb = runCacheCommand(t, "key", "-f", "scripts.yml", "--only", "s")
	if code != ExitOK || !runKey.MatchString(got) || got == key || !strings.Contains(errb, "1 build left out (s)") {
		t.Errorf("--only s: exit %d, key %q, stderr %q", code, got, errb)
	}
}

// A build with run: that declares its inputs is in cache key's key (which
// changes with an input), and --explain shows its parts: its inputs with
// their files, the program its command runs.
func TestCacheKeyHasScriptsWithInputs(t *testing.T) {
	lib := t.TempDir()
	for _, f := range []string{"libtensorrt_rtx.so.1", "libtensorrt_onnxparser_rtx.so.1"} {
		if err := os.WriteFile(filepath.Join(lib, f), []byte("stand-in "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TRT_ACTION_RTX_LIB", lib) // the command is no Python: its library as any build finds it
	withScript := cacheMatrix + "  - {name: s, backend: tensorrt-rtx, run: [sh, build.sh], engine: s.engine, inputs: [build.sh, data]}\n"
	dir := inDir(t, map[string]string{"trt-builds.yml": cacheMatrix, "scripts.yml": withScript, "build.sh": "echo 1\n", "data/w.bin": "w"})
	_, key, _ := runCacheCommand(t, "key")
	code, got, errb := runCacheCommand(t, "key", "-f", "scripts.yml")
	if code != ExitOK || !runKey.MatchString(got) || got == key || errb != "" {
		t.Fatalf("exit %d, key %q (without the script %q), stderr %q", code, got, key, errb)
	}
	if err := os.WriteFile("data/w.bin", []byte("other weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, again, _ := runCacheCommand(t, "key", "-f", "scripts.yml"); again == got {
		t.Error("the key did not change with an input")
	}
	code, out, errb := runCacheCommand(t, "key", "-f", "scripts.yml", "--only", "s", "--explain")
	for _, want := range []string{"script.inputs.build.sh", "(" + filepath.Join(dir, "build.sh") + ")", "script.inputs.data/w.bin",
		"script.command", `["sh","build.sh"]`, "script.program.file", "script.engines", `["s.engine"]`} {
		if !strings.Contains(out, want) {
			t.Errorf("--explain lacks %q: exit %d\n%s%s", want, code, out, errb)
		}
	}
}

// TestCacheKeyLibraryUnknown: where the library a backend would take
// cannot be found (here: a named folder without it), the key is refused
// with the reason and the fix.
func TestCacheKeyLibraryUnknown(t *testing.T) {
	t.Setenv("TRT_ACTION_RTX_LIB", t.TempDir())
	inDir(t, map[string]string{"m.onnx": "", "trt-builds.yml": "version: 1\nbuilds:\n  - {name: r, backend: tensorrt-rtx, onnx: m.onnx}\n"})
	code, out, errb := runCacheCommand(t, "key")
	if code != ExitInvalid || out != "" || !strings.Contains(errb, "build r: ") || !strings.Contains(errb, "TRT_ACTION_RTX_LIB") {
		t.Errorf("exit %d, out %q, err %q", code, out, errb)
	}
}

// fillCache stores an entry per name into the cache at dir, the first
// used longest ago.
func fillCache(t *testing.T, dir string, names ...string) *cache.Cache {
	t.Helper()
	c, err := cache.Open(cache.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		eng := filepath.Join(t.TempDir(), "e")
		if err := os.WriteFile(eng, []byte(strings.Repeat(name, 1000)[:1000]), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(name))
		k := cache.Key(hex.EncodeToString(sum[:]))
		if _, err := c.Store(k, eng, cache.Entry{Build: name, Backend: "sim", BuiltAt: time.Now().Add(-time.Hour), Duration: 90 * time.Second}); err != nil {
			t.Fatal(err)
		}
		used := time.Now().Add(time.Duration(i-len(names)) * time.Hour)
		meta := filepath.Join(dir, cacheVersion, string(k[:2]), string(k), "entry.json")
		if err := os.Chtimes(meta, used, used); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestCacheLsPruneVerify(t *testing.T) {
	dir := inDir(t, map[string]string{"trt-builds.yml": cacheMatrix})
	fillCache(t, filepath.Join(dir, ".trt-cache"), "old", "mid", "new")

	// Sizes are what max-size counts: each engine (1,000 bytes) and its
	// entry.json. Before, ls showed the engines alone.
	var onDisk int64
	files, _ := filepath.Glob(filepath.Join(dir, ".trt-cache", cacheVersion, "*", "*", "*"))
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			onDisk += fi.Size()
		}
	}
	entrySize := text.Bytes(onDisk / 3) // the three entries' metadata differ by a few bytes at most
	code, out, errb := runCacheCommand(t, "ls")
	if code != ExitOK || len(files) != 6 ||
		!regexp.MustCompile(`(?m)^key +build +backend +size +built +took +last used\n[0-9a-f]{12} +new +sim +`+regexp.QuoteMeta(entrySize)+` +1 hour ago +1m30s +1 hour ago\n`).MatchString(out) ||
		!strings.HasSuffix(out, "3 entries, "+text.Bytes(onDisk)+" (engines and their metadata: what max-size counts)\n") {
		t.Errorf("cache ls: exit %d, want sizes of %d bytes in all\n%s%s", code, onDisk, out, errb)
	}
	code, out, _ = runCacheCommand(t, "ls", "--json", "--cache", ".trt-cache")
	var listed []cache.ListedEntry
	if err := json.Unmarshal([]byte(out), &listed); code != ExitOK || err != nil || len(listed) != 3 || listed[0].Build != "new" || listed[2].Build != "old" || listed[0].DurationMs != 90000 ||
		listed[0].Bytes != 1000 || listed[0].DiskBytes+listed[1].DiskBytes+listed[2].DiskBytes != onDisk {
		t.Errorf("cache ls --json: exit %d, %v, %+v; want disk_bytes adding up to %d", code, err, listed, onDisk)
	}

	// Room for two entries as ls counts them: the least recently used goes.
	code, out, _ = runCacheCommand(t, "prune", "--max-size", fmt.Sprint(onDisk*2/3+10))
	if code != ExitOK || !strings.Contains(out, " old ("+entrySize+", last used 3 hours ago)") || !strings.HasSuffix(out, "removed 1 entry, "+entrySize+"\n") {
		t.Errorf("cache prune --max-size %d: exit %d\n%s", onDisk*2/3+10, code, out)
	}
	code, out, _ = runCacheCommand(t, "prune", "--older-than", "90m")
	if code != ExitOK || !strings.Contains(out, " mid ") || strings.Contains(out, " new ") {
		t.Errorf("cache prune --older-than 90m: exit %d\n%s", code, out)
	}

	code, out, _ = runCacheCommand(t, "verify")
	if code != ExitOK || out != "1 entry ok\n" {
		t.Errorf("cache verify of a good cache: exit %d, %q", code, out)
	}
	engines, _ := filepath.Glob(filepath.Join(dir, ".trt-cache", cacheVersion, "*", "*", "engine"))
	if len(engines) != 1 {
		t.Fatalf("engines %v", engines)
	}
	if err := os.WriteFile(engines[0], []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errb = runCacheCommand(t, "verify")
	if code != ExitFailed || !strings.Contains(errb, filepath.Base(filepath.Dir(engines[0]))) || !strings.Contains(errb, "(cut short)") || !strings.Contains(errb, "removed") {
		t.Errorf("cache verify of a bad entry: exit %d\n%s", code, errb)
	}
	if _, err := os.Stat(engines[0]); !os.IsNotExist(err) {
		t.Error("verify kept the bad entry")
	}
}

// After an upgrade the old format's folder stays beside the new one:
// cache ls names it with its size, and cache prune --other-formats
// removes it (only it, when asked for alone). A build's notice:
// cmd/trt-action's TestABuildNamesAnOlderCacheFormatOnce.
func TestOlderCacheFormatIsNamedThenPruned(t *testing.T) {
	dir := inDir(t, map[string]string{"trt-builds.yml": cacheMatrix})
	fillCache(t, filepath.Join(dir, ".trt-cache"), "current")
	old := filepath.Join(dir, ".trt-cache", "v1", "ab", "abcd")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "engine"), make([]byte, 4_000), 0o644); err != nil {
		t.Fatal(err)
	}
	const named = "v1/ (cache format 1, 4.0 kB) is never read by this version"
	code, out, errb := runCacheCommand(t, "ls")
	if code != ExitOK || !strings.Contains(errb, named) || !strings.Contains(out, "1 entry, ") {
		t.Errorf("cache ls: exit %d, want v1/ named on stderr\n%s%s", code, out, errb)
	}
	code, out, errb = runCacheCommand(t, "prune", "--other-formats")
	if code != ExitOK || !strings.HasPrefix(out, "removed .trt-cache/v1/ (cache format 1, 4.0 kB): this version never reads it\n") ||
		!strings.HasSuffix(out, "removed 0 entries, 0 B\n") || strings.Contains(errb, "v1/") {
		t.Errorf("cache prune --other-formats: exit %d\n%s%s", code, out, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, ".trt-cache", "v1")); !os.IsNotExist(err) {
		t.Errorf("v1/ stayed: %v", err)
	}
	if code, out, errb = runCacheCommand(t, "ls"); code != ExitOK || errb != "" || !strings.Contains(out, "1 entry, ") {
		t.Errorf("cache ls after: exit %d, want this format's entry and no warning\n%s%s", code, out, errb)
	}
}

func TestCacheUsageErrors(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": goodMatrix})
	if err := os.Mkdir("c", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "name a verb"},
		{[]string{"list"}, `unknown verb "list"; allowed: key, ls, prune, verify`},
		{[]string{"ls"}, "no cache folder: give --cache DIR"},
		{[]string{"prune", "--cache", "c"}, "--max-size SIZE, --older-than DURATION or --other-formats"},
		{[]string{"prune", "--cache", "c", "--max-size", "big"}, `invalid size "big"`},
		{[]string{"prune", "--cache", "c", "--older-than", "-1h"}, "cache prune: --older-than -1h0m0s: want a duration above zero, like 720h"},
		{[]string{"prune", "--cache", "c", "--older-than", "0s"}, "cache prune: --older-than 0s: want a duration above zero"},
		{[]string{"prune", "--cache", "c", "--max-size", "1GiB", "--older-than", "0s"}, "cache prune: --older-than 0s: want a duration above zero"},
		{[]string{"verify", "--cache", "c", "extra"}, `takes no arguments; got "extra"`},
	} {
		code, _, errb := runCacheCommand(t, c.args...)
		if code != ExitInvalid || !strings.Contains(errb, c.want) {
			t.Errorf("cache %v: exit %d, want %d with %q:\n%s", c.args, code, ExitInvalid, c.want, errb)
		}
	}
	if code, _, errb := runCacheCommand(t, "-h"); code != ExitOK || !strings.Contains(errb, "\n  --max-size size\n") || !strings.Contains(errb, "\n  --prefix\n") {
		t.Errorf("cache -h: exit %d, every verb's flags wanted:\n%s", code, errb)
	}
}

// ls, prune and verify look at a cache: a folder that is not there is an
// error (a mistyped --cache is not an empty cache), and they create
// nothing, not even in a folder that is there but holds no cache yet.
// ls lists an entry that can never be served as broken, with its size,
// counts it in the total and says why; prune removes it first and says
// what it knows of it. Before, ls left out an entry whose metadata did
// not read and listed one whose engine was a FIFO as a good entry sized
// at its metadata, and prune printed "removed 088ad82c9200  (440.8 kB,
// last used 2562047h47m16.854775807s ago)" for the first.
func TestCacheLsAndPruneOfBrokenEntries(t *testing.T) {
	dir := inDir(t, map[string]string{"trt-builds.yml": cacheMatrix})
	fillCache(t, filepath.Join(dir, ".trt-cache"), "good", "piped", "garbled")
	entry := func(name string) string {
		sum := sha256.Sum256([]byte(name))
		k := hex.EncodeToString(sum[:])
		return filepath.Join(dir, ".trt-cache", cacheVersion, k[:2], k)
	}
	if err := os.WriteFile(filepath.Join(entry("garbled"), "entry.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(entry("piped"), "engine")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	pipedMeta := metaBytes(t, entry("piped"))
	code, out, errb := runCacheCommand(t, "ls")
	garbledRow := regexp.MustCompile(`(?m)^` + filepath.Base(entry("garbled"))[:12] + ` +\(broken\) +— +1\.0 kB +— +— +(just now|.+ ago)$`)
	pipedRow := regexp.MustCompile(`(?m)^` + filepath.Base(entry("piped"))[:12] + ` +piped \(broken\) +sim +[0-9]+ B +`)
	if code != ExitOK || !garbledRow.MatchString(out) || !pipedRow.MatchString(out) || !strings.Contains(out, "\n3 entries (2 broken), ") ||
		!strings.Contains(errb, "is broken: its metadata is not valid JSON") || !strings.Contains(errb, "is broken: its engine is a FIFO, not a file") {
		t.Errorf("cache ls: exit %d\n%s%s", code, out, errb)
	}
	code, out, errb = runCacheCommand(t, "prune", "--max-size", "1GB")
	if code != ExitOK || !strings.Contains(out, "removed "+filepath.Base(entry("garbled"))[:12]+" (broken: its metadata is not valid JSON") ||
		!strings.Contains(out, "removed "+filepath.Base(entry("piped"))[:12]+" piped (broken: its engine is a FIFO, not a file, ") ||
		strings.Contains(out, "2562047h") || !strings.HasSuffix(out, "removed 2 entries, "+text.Bytes(1009+pipedMeta)+"\n") {
		t.Errorf("cache prune: exit %d\n%s%s", code, out, errb)
	}
	if _, err := os.Stat(entry("good")); err != nil {
		t.Errorf("prune removed the good entry: %v", err)
	}
}

// metaBytes is the size of the entry.json in an entry folder.
func metaBytes(t *testing.T, entry string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(entry, "entry.json"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A prune that fails before removing anything says why and nothing else.
// Before, a prune whose lock file was a folder printed "removed 0
// entries, 0 B" and then failed. Links in the staging folder are named as
// links by ls, not counted as leftovers of killed stores.
func TestCachePruneFailureAndStagingLinks(t *testing.T) {
	dir := inDir(t, map[string]string{"trt-builds.yml": cacheMatrix})
	fillCache(t, filepath.Join(dir, ".trt-cache"), "a")
	if err := os.Mkdir(filepath.Join(dir, ".trt-cache", cacheVersion, "prune.lock"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errb := runCacheCommand(t, "prune", "--max-size", "1")
	if code == ExitOK || out != "" || !strings.Contains(errb, "prune.lock") || !strings.Contains(errb, "remove what is there") {
		t.Errorf("cache prune with a folder at prune.lock: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	outside := t.TempDir()
	link := filepath.Join(".trt-cache", cacheVersion, "tmp", "store-0123")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	code, _, errb = runCacheCommand(t, "ls")
	if code != ExitOK || !strings.Contains(errb, link+" is a symbolic link (to "+outside+") in the staging folder") || strings.Contains(errb, "leftover") {
		t.Errorf("cache ls with a link in tmp/: exit %d\n%s", code, errb)
	}
}

func TestCacheCommandsNeedAnExistingFolder(t *testing.T) {
	dir := inDir(t, map[string]string{"trt-builds.yml": cacheMatrix})
	absent := filepath.Join(dir, "absent")
	for _, args := range [][]string{{"ls", "--cache", absent}, {"verify", "--cache", absent}, {"prune", "--cache", absent, "--max-size", "1"}, {"ls"}} {
		code, out, errb := runCacheCommand(t, args...)
		where := absent
		if len(args) == 1 {
			where = ".trt-cache" // the matrix file's cache: dir, from its folder (here)
		}
		if code != ExitInvalid || errb != "trt-action: no engine cache at "+where+": no such file or directory\n" || out != "" {
			t.Errorf("cache %v: exit %d, want %d\nstdout %q\nstderr %q", args, code, ExitInvalid, out, errb)
		}
		if _, err := os.Lstat(where); !os.IsNotExist(err) {
			t.Errorf("cache %v created %s", args, where)
		}
	}
	if err := os.WriteFile(absent, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errb := runCacheCommand(t, "ls", "--cache", absent); code != ExitInvalid || !strings.Contains(errb, "no engine cache at "+absent+": not a folder") {
		t.Errorf("cache ls of a file: exit %d, %q", code, errb)
	}

	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ls", "--cache", empty}, "0 entries, 0 B (engines and their metadata: what max-size counts)\n"},
		{[]string{"verify", "--cache", empty}, "0 entries ok\n"},
		{[]string{"prune", "--cache", empty, "--older-than", "1h"}, "removed 0 entries, 0 B\n"},
	} {
		code, out, errb := runCacheCommand(t, c.args...)
		if code != ExitOK || !strings.HasSuffix(out, c.want) {
			t.Errorf("cache %v: exit %d, %q, want %q\n%s", c.args, code, out, c.want, errb)
		}
	}
	if left, _ := os.ReadDir(empty); len(left) != 0 {
		t.Errorf("cache ls, verify and prune created %v in an empty folder", left)
	}
}

// A cache folder the build cannot open is named where it came from: the
// matrix's cache: dir, with its position, or --cache. Before, a folder
// from the matrix was called `--cache ".trt-cache"`, a flag never given.
func TestBuildNamesWhereItsCacheFolderCameFrom(t *testing.T) {
	dir := inDir(t, map[string]string{"trt-builds.yml": cacheMatrix})
	if err := os.Mkdir(filepath.Join(dir, ".trt-cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, ".trt-cache", cacheVersion)); err != nil {
		t.Fatal(err)
	}
	c, out, errb := userCommand("")
	c.Executable = func() (string, error) { return "/nonexistent/trt-action", nil } // no build may start
	if code := c.Main([]string{"build"}); code != ExitInvalid ||
		!strings.Contains(errb.String(), `trt-builds.yml:2:1: cache: dir ".trt-cache": .trt-cache/`+cacheVersion+` is a symbolic link`) || strings.Contains(errb.String(), "--cache") {
		t.Errorf("build: exit %d\n%s%s", code, out, errb)
	}
}

// cacheVersion is the folder of the cache format entries are stored in.
var cacheVersion = fmt.Sprintf("v%d", cache.FormatVersion)
