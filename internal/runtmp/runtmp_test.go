package runtmp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// privateTemp points the system's temporary folder at a fresh one.
func privateTemp(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	return tmp
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestMakeHoldsAPrivateLockedFolder(t *testing.T) {
	tmp := privateTemp(t)
	d, err := Make(HookPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(d.Path) != tmp || !named(filepath.Base(d.Path)) {
		t.Errorf("made %s, want a folder named %s… in %s", d.Path, HookPrefix, tmp)
	}
	info, err := os.Lstat(d.Path)
	if err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v (%v), want a folder only its user can use", d.Path, info.Mode(), err)
	}
	if !exists(filepath.Join(d.Path, lockName)) || exists(filepath.Join(d.Path, pendingLock)) {
		t.Errorf("the lock file is not in place")
	}
	if got := Sweep(); len(got) != 0 || !exists(d.Path) {
		t.Fatalf("a sweep removed %v, the folder of a live run", got)
	}
	if err := d.Remove(); err != nil || exists(d.Path) {
		t.Errorf("Remove: %v; folder left: %v", err, exists(d.Path))
	}
}

// A run that died (its lock let go without the folder removed) leaves a
// folder the next sweep removes; a live run's, a folder being made, and
// anything else in the temporary folder stay as they are.
func TestSweepRemovesOnlyTheFoldersOfRunsThatAreGone(t *testing.T) {
	tmp := privateTemp(t)
	dead, err := Make(ScriptPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead.Path, "s"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dead.lock.Close() // what the system does when the run's process ends
	live, err := Make(HookPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()

	making := filepath.Join(tmp, HookPrefix+"making") // made, its lock not yet in place
	other := filepath.Join(tmp, "someone-elses")      // not a name of ours
	elsewhere := t.TempDir()                          // a dead run's folder, reached by a link
	for _, dir := range []string{making, other, filepath.Join(other, "x"), filepath.Join(elsewhere, "d")} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "d", lockName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, HookPrefix+"link")
	if err := os.Symlink(filepath.Join(elsewhere, "d"), link); err != nil {
		t.Fatal(err)
	}
	// A folder whose lock is a link to an unlocked file: never opened.
	linkedLock := filepath.Join(tmp, ScriptPrefix+"linked-lock")
	if err := os.Mkdir(linkedLock, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "d", lockName), filepath.Join(linkedLock, lockName)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tmp, ScriptPrefix+"file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	got := Sweep()
	if !slices.Equal(got, []string{dead.Path}) {
		t.Errorf("Sweep removed %v, want only %s", got, dead.Path)
	}
	if exists(dead.Path) {
		t.Errorf("the dead run's folder is left")
	}
	for _, keep := range []string{live.Path, making, filepath.Join(other, "x"), link, filepath.Join(elsewhere, "d", lockName), linkedLock, file} {
		if !exists(keep) {
			t.Errorf("%s was removed", keep)
		}
	}
	if got := Sweep(); len(got) != 0 {
		t.Errorf("a second sweep removed %v", got)
	}
}
