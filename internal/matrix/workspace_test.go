package matrix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoWithMatrix makes a git repository (a .git folder is enough) holding
// sub/m.yml with body, and returns the repository and the matrix path.
func repoWithMatrix(t *testing.T, body string) (repo, matrixPath string) {
	t.Helper()
	t.Setenv("GITHUB_ACTIONS", "")
	repo = realDir(t, t.TempDir())
	for _, d := range []string{".git", "sub"} {
		if err := os.Mkdir(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	matrixPath = filepath.Join(repo, "sub", "m.yml")
	if err := os.WriteFile(matrixPath, []byte("version: 1\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo, matrixPath
}

func realDir(t *testing.T, d string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// wantPathError checks that loading fails with one error at line:col that
// says all of parts.
func wantPathError(t *testing.T, matrixPath, at string, parts ...string) {
	t.Helper()
	_, err := Load(matrixPath)
	if err == nil {
		t.Fatalf("loaded; want an error at %s", at)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, matrixPath+":"+at+": ") || strings.Count(msg, "\n") != 0 {
		t.Fatalf("error = %q, want one error at %s", msg, at)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not say %q", msg, p)
		}
	}
}

func TestRelativePathsResolveAgainstTheMatrixFolder(t *testing.T) {
	repo, m := repoWithMatrix(t, "builds:\n  - {name: a, backend: sim, engine: ../out/a.engine, timing-cache: c/a.cache}\n  - {name: b, backend: sim}\n")
	f, err := Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Builds[0].Engine, filepath.Join(repo, "out", "a.engine"); got != want {
		t.Errorf("engine = %s, want %s", got, want)
	}
	if got, want := f.Builds[0].TimingCache, filepath.Join(repo, "sub", "c", "a.cache"); got != want {
		t.Errorf("timing cache = %s, want %s", got, want)
	}
	if got, want := f.Builds[1].Engine, filepath.Join(repo, "sub", "b.engine"); got != want {
		t.Errorf("default engine = %s, want %s", got, want)
	}
}

func TestOutputOutsideTheRepositoryIsAnError(t *testing.T) {
	_, m := repoWithMatrix(t, "builds:\n  - name: a\n    backend: sim\n    engine: ../../../../../../../../tmp/x.engine\n")
	wantPathError(t, m, "5:13", `engine: "`, "outside the workspace", "git repository", "allow-paths: [/tmp]")
}

func TestAbsoluteOutputNeedsAllowPaths(t *testing.T) {
	outside := realDir(t, t.TempDir())
	build := "builds:\n  - {name: a, backend: sim, timing-cache: " + outside + "/deep/a.cache}\n"
	_, m := repoWithMatrix(t, build)
	wantPathError(t, m, "3:43", "timing-cache", "outside the workspace")

	_, m = repoWithMatrix(t, "allow-paths: ["+outside+"]\n"+build)
	if _, err := Load(m); err != nil {
		t.Errorf("with allow-paths: %v", err)
	}
}

func TestAllowPathsIsRelativeToTheMatrixFolder(t *testing.T) {
	repo, m := repoWithMatrix(t, "allow-paths: [../../engines]\nbuilds:\n  - {name: a, backend: sim, engine: ../../engines/a.engine}\n")
	if _, err := Load(m); err != nil {
		t.Errorf("allow-paths ../../engines from %s: %v", repo, err)
	}
}

func TestSymlinkedFolderIsFollowedBeforeTheCheck(t *testing.T) {
	outside := realDir(t, t.TempDir())
	repo, m := repoWithMatrix(t, "builds:\n  - {name: a, backend: sim, engine: out/a.engine}\n  - {name: b, backend: sim, engine: in/b.engine}\n")
	symlink(t, outside, filepath.Join(repo, "sub", "out"))
	symlink(t, filepath.Join(repo, ".git"), filepath.Join(repo, "sub", "in"))
	wantPathError(t, m, "3:37", "resolves to "+filepath.Join(outside, "a.engine"), "outside the workspace")

	// The same link, allowed by its target's name.
	_, m = repoWithMatrix(t, "allow-paths: ["+outside+"]\nbuilds:\n  - {name: a, backend: sim, engine: out/a.engine}\n")
	symlink(t, outside, filepath.Join(filepath.Dir(m), "out"))
	if _, err := Load(m); err != nil {
		t.Errorf("link into an allowed folder: %v", err)
	}
}

func TestSymlinkAtTheOutputPathIsAnError(t *testing.T) {
	outside := realDir(t, t.TempDir())
	repo, m := repoWithMatrix(t, "builds:\n  - {name: a, backend: sim, engine: a.engine, timing-cache: a.cache}\n  - {name: b, backend: sim}\n")
	symlink(t, filepath.Join(outside, "victim"), filepath.Join(repo, "sub", "a.engine"))        // dangling, outside
	symlink(t, filepath.Join(repo, "sub", "real.cache"), filepath.Join(repo, "sub", "a.cache")) // inside, still a link
	symlink(t, filepath.Join(repo, "sub", "real.engine"), filepath.Join(repo, "sub", "b.engine"))
	_, err := Load(m)
	if err == nil {
		t.Fatal("loaded despite links at output paths")
	}
	lines := strings.Split(err.Error(), "\n")
	// b has no engine key: its engine path is its name's, said at name.
	want := []string{m + ":3:37: engine:", m + ":3:61: timing-cache:", m + ":4:6: engine:"}
	if len(lines) != len(want) {
		t.Fatalf("errors:\n%s\nwant %d", err, len(want))
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, want[i]) || !strings.Contains(l, "symbolic link") {
			t.Errorf("error %d = %q, want %q… symbolic link", i, l, want[i])
		}
	}
}

func TestGitHubWorkspaceIsTheBoundaryInActions(t *testing.T) {
	repo, m := repoWithMatrix(t, "builds:\n  - {name: a, backend: sim, engine: ../a.engine}\n")
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_WORKSPACE", filepath.Join(repo, "sub"))
	wantPathError(t, m, "3:37", "outside the workspace", "(GITHUB_WORKSPACE)")

	// A matrix file outside GITHUB_WORKSPACE keeps its own repository.
	t.Setenv("GITHUB_WORKSPACE", realDir(t, t.TempDir()))
	if _, err := Load(m); err != nil {
		t.Errorf("matrix outside GITHUB_WORKSPACE: %v", err)
	}
}
