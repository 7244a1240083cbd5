package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteReplacesRegularFilesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := Write(path, []byte("first\n")); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != newFileMode {
		t.Errorf("new file mode %v, want %v", info.Mode().Perm(), fs.FileMode(newFileMode))
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	before := inode(t, path)
	if err := Write(path, []byte("second\n")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "second\n" {
		t.Errorf("content %q, want the second write", got)
	}
	if inode(t, path) == before {
		t.Error("the file was rewritten in place; a reader could have seen half of it")
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after a replacement, want the old file's 0600", info.Mode().Perm())
	}
	checkOnly(t, dir, "report.json")
}

// Issue 13 item 1: a FIFO at an output path was replaced by a regular file.
func TestWriteGoesStraightThroughAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "report.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsStream(fifo) {
		t.Error("IsStream(FIFO) = false")
	}
	got := readFIFO(fifo)
	if err := Write(fifo, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "{}\n" {
			t.Errorf("reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the FIFO's reader got nothing")
	}
	info, err := os.Lstat(fifo)
	if err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: mode %v, err %v", info.Mode(), err)
	}
	checkOnly(t, dir, "report.fifo")
}

// /dev/null is a character device. It is reached through a link in a
// temporary folder: without the fix, the rename replaces the link, never
// /dev/null itself, so this test is safe even as root.
func TestWriteGoesStraightThroughACharDevice(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "null")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("discarded\n")); err != nil {
		t.Fatal(err)
	}
	if dest, err := os.Readlink(link); err != nil || dest != "/dev/null" {
		t.Errorf("the link to /dev/null was replaced (readlink %q, %v)", dest, err)
	}
	if info, err := os.Stat("/dev/null"); err != nil || info.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a character device: %v %v", info.Mode(), err)
	}
	if err := Check(link); err != nil {
		t.Errorf("Check(link to /dev/null) = %v", err)
	}
	checkOnly(t, dir, "null")
}

// A descriptor (/dev/stdout when stdout goes to a file) is written at its
// end; renaming over its file would cut the process off from it.
func TestWriteAppendsToAnOpenDescriptor(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.txt")
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("log line\n"); err != nil {
		t.Fatal(err)
	}
	before := inode(t, log)
	fd := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	if !IsStream(fd) {
		t.Errorf("IsStream(%s) = false", fd)
	}
	if err := Write(fd, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, log); got != "log line\n{}\n" {
		t.Errorf("log = %q, want the log line and then the report", got)
	}
	if inode(t, log) != before {
		t.Error("the descriptor's file was replaced")
	}
}

func TestWriteFollowsALinkToARegularFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real", "report.json")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "report.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, real); got != "new" {
		t.Errorf("the link's file holds %q, want new", got)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	checkOnly(t, filepath.Dir(real), "report.json")
}

func TestWriteRefusesWhatItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(folder, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "nowhere", "r.json"), dangling); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		folder:   folder + " is a folder",
		dangling: dangling + " is a symbolic link to " + filepath.Join(dir, "nowhere", "r.json") + ", which does not exist",
	} {
		for name, err := range map[string]error{"Write": Write(path, []byte("x")), "Check": Check(path)} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s(%s) = %v, want %q", name, path, err, want)
			}
		}
	}
	checkOnly(t, dir, "dangling.json", "out")
}

// Issue 13 item 19: "open X: open X: …". The path is named once, and never
// by the partial file's name, which does not exist after the failure.
func TestWriteErrorNamesThePathOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "r.json")
	err := Write(path, []byte("x"))
	if err == nil {
		t.Fatal("Write into a missing folder succeeded")
	}
	if msg := err.Error(); strings.Count(msg, "r.json") != 1 || strings.Contains(msg, partialInfix) {
		t.Errorf("error %q: want the path once and no partial file name", msg)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v lost its cause", err)
	}
}

func TestCheckCreatesTheFolderAndChangesNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "reports", "nightly", "r.json")
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Dir(path)); err != nil || !info.IsDir() {
		t.Fatalf("the report's folder was not created: %v", err)
	}
	checkOnly(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(path); err != nil || read(t, path) != "old" {
		t.Errorf("Check of an existing report: %v; content now %q", err, read(t, path))
	}
	// A file where a folder should be fails (the tests may run as root,
	// where permissions would not).
	if err := Check(filepath.Join(path, "under-a-file.json")); err == nil {
		t.Error("Check of a path under a regular file succeeded")
	}
}

// Checking a FIFO before the run must not hand a reader that already
// waits on it an empty document: it reads the one Write sends at the end.
func TestCheckLeavesAFIFOsReaderWaiting(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := readFIFO(fifo)
	time.Sleep(50 * time.Millisecond) // let the reader block in open
	if err := Check(fifo); err != nil {
		t.Fatalf("Check(FIFO) = %v", err)
	}
	go func() {
		if err := Write(fifo, []byte("report\n")); err != nil {
			t.Error(err)
		}
	}()
	select {
	case s := <-got:
		if s != "report\n" {
			t.Errorf("the reader got %q, want the report", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader got nothing")
	}
}

// A FIFO nobody reads must not hold a finished run for ever.
func TestWriteGivesUpOnAFIFOWithoutAReader(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(w time.Duration) { fifoReaderWait = w }(fifoReaderWait)
	fifoReaderWait = 100 * time.Millisecond
	if err := Check(fifo); err != nil {
		t.Errorf("Check(FIFO without a reader yet) = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- Write(fifo, []byte("x")) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is a FIFO that nobody read within 100ms") {
			t.Errorf("Write to an unread FIFO = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Write blocked on a FIFO nobody reads")
	}
}

// Install is for matrix paths: it never follows a link or replaces
// anything but a regular file.
func TestInstallReplacesOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(dir, "elsewhere.engine")
	if err := os.WriteFile(elsewhere, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.engine")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.engine")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder.engine")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		link:   "is a symbolic link",
		fifo:   "is a FIFO, not a regular file",
		folder: "is a folder",
	} {
		tmp := PartialName(path)
		if err := os.WriteFile(tmp, []byte("engine"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Install(tmp, path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Install over %s = %v, want %q", filepath.Base(path), err, want)
		}
		os.Remove(tmp)
	}
	if got := read(t, elsewhere); got != "keep" {
		t.Errorf("the link's target was written: %q", got)
	}
	if info, _ := os.Lstat(fifo); info.Mode()&fs.ModeNamedPipe == 0 {
		t.Error("the FIFO was replaced")
	}
	regular := filepath.Join(dir, "ok.engine")
	for _, content := range []string{"one", "two"} {
		tmp := PartialName(regular)
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Install(tmp, regular); err != nil {
			t.Fatal(err)
		}
		if got := read(t, regular); got != content {
			t.Errorf("engine holds %q, want %q", got, content)
		}
	}
}

// Issue 13 item 18: kill -9 leaves "<engine>.partial-<pid>-<n>".
func TestRemoveStaleRemovesOnlyPartialsOfDeadProcesses(t *testing.T) {
	dir := t.TempDir()
	engine := filepath.Join(dir, "mlp.engine")
	dead := finishedPID(t)
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()

	stale := fmt.Sprintf("%s.partial-%d-3", engine, dead)
	keep := []string{
		fmt.Sprintf("%s.partial-%d-0", engine, live.Process.Pid),                 // a live writer
		fmt.Sprintf("%s.partial-%d-7", engine, os.Getpid()),                      // ours
		fmt.Sprintf("%s.partial-%d-1", filepath.Join(dir, "other.engine"), dead), // another path
		fmt.Sprintf("%s.partial-%d-x", engine, dead),                             // not our name
		engine,
	}
	for _, name := range append([]string{stale}, keep...) {
		if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveStale(engine)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != stale {
		t.Errorf("removed %v, want only %s", removed, stale)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dead process's partial is still there: %v", err)
	}
	for _, name := range keep {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(name), err)
		}
	}
}

// readFIFO reads fifo in the background, from the moment a writer opens
// it until the writer closes it, and sends what it read.
func readFIFO(fifo string) <-chan string {
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until a writer opens its end
		if err != nil {
			got <- err.Error()
			return
		}
		data, _ := io.ReadAll(f)
		f.Close()
		got <- string(data)
	}()
	return got
}

// finishedPID is the PID of a child that has exited and been reaped: a
// process that no longer exists.
func finishedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Ino
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// checkOnly asserts dir holds exactly names: no partial file left behind.
func checkOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

// A report's partial file left by a killed run goes at the next write.
func TestWriteRemovesStalePartialsOfItsPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trt-report.json")
	stale := fmt.Sprintf("%s.partial-%d-1", path, finishedPID(t))
	if err := os.WriteFile(stale, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	checkOnly(t, dir, "trt-report.json")
}

// Append adds to a copy and renames it in: the file the path named before
// (a reader, another name of it) never sees a part of the addition.
func TestAppendReplacesTheFileWithTheAddition(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(path, []byte("# Summary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other-name.md")
	if err := os.Link(path, other); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, []byte("> note\n")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "# Summary\n> note\n" {
		t.Errorf("content %q, want the old content and the note", got)
	}
	if got := read(t, other); got != "# Summary\n" {
		t.Errorf("the file's other name changed to %q: it was written in place", got)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", info.Mode().Perm())
	}
	if err := Append(filepath.Join(dir, "new.md"), []byte("x")); err != nil || read(t, filepath.Join(dir, "new.md")) != "x" {
		t.Errorf("Append to nothing: %v", err)
	}
	checkOnly(t, dir, "new.md", "other-name.md", "summary.md")
}

// Live replaces the file at once with an empty one it then writes: the
// old file is not truncated (os.Create would empty every name of it).
func TestLiveStartsANewFileAndKeepsTheOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(path, []byte("last run\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "last-run.jsonl")
	if err := os.Link(path, old); err != nil {
		t.Fatal(err)
	}
	w, err := Live(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "" {
		t.Errorf("a live file starts empty; it holds %q", got)
	}
	if _, err := io.WriteString(w, "line 1\n"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "line 1\n" {
		t.Errorf("a reader following the file sees %q, want each line as it is written", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, old); got != "last run\n" {
		t.Errorf("the old file's other name holds %q: it was truncated", got)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the old file's 0640", info.Mode().Perm())
	}
	checkOnly(t, dir, "events.jsonl", "last-run.jsonl")
	if _, err := Live(dir); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("Live(folder): %v, want an error saying it is a folder", err)
	}
}

// A FIFO without a reader is given up on, as by Write, rather than
// blocking the run for ever (os.Create would).
func TestLiveGoesStraightThroughAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "events.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := readFIFO(fifo)
	w, err := Live(fifo)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "{}\n")
	w.Close()
	select {
	case s := <-got:
		if s != "{}\n" {
			t.Errorf("reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the FIFO's reader got nothing")
	}
	checkOnly(t, dir, "events.fifo")
}

// WriteFrom's content is streamed into the partial file; a fill that fails
// half-way (a full disk, an encoder's error) leaves the old file as it was
// and no partial file beside it: the JUnit file of a run cut short.
func TestWriteFromThatFailsKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "junit.xml")
	if err := Write(path, []byte("<good/>\n")); err != nil {
		t.Fatal(err)
	}
	full := errors.New("no space left on device")
	err := WriteFrom(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, "<testsuites>\n  <testcase"); err != nil {
			return err
		}
		return full
	})
	if !errors.Is(err, full) {
		t.Errorf("WriteFrom: %v, want the fill's error", err)
	}
	if got := read(t, path); got != "<good/>\n" {
		t.Errorf("content %q, want the old file", got)
	}
	checkOnly(t, dir, "junit.xml")
}
