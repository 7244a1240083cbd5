package runfiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// project makes a folder with a matrix file and a model, and returns it.
func project(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"c.yml", "models/mlp.onnx"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func inputs(dir string) []File {
	return []File{
		{Path: filepath.Join(dir, "c.yml"), Role: Input, Noun: "the matrix file"},
		{Path: filepath.Join(dir, "models/mlp.onnx"), Role: Input, Noun: "the model", Build: "mlp", Pos: "c.yml:5:5"},
	}
}

// messages is Check's collisions, one a line, or "" when there is none.
func messages(t *testing.T, files []File) string {
	t.Helper()
	err := Check(files)
	if err == nil {
		return ""
	}
	var cs Collisions
	if !errors.As(err, &cs) {
		t.Fatalf("Check returned %T, want Collisions", err)
	}
	return err.Error()
}

// Issue 17 item 2: each way of naming an input as an output is refused.
func TestAnOutputThatIsAnInputIsRefused(t *testing.T) {
	dir := project(t)
	if err := os.Symlink("models", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "deep/er"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("deep/er", filepath.Join(dir, "deeplink")); err != nil {
		t.Fatal(err)
	}
	for name, output := range map[string]string{
		"the same name":       "models/mlp.onnx",
		"a longer name":       "models/../models/./mlp.onnx",
		"a folder link":       "link/mlp.onnx",
		"an absolute name":    filepath.Join(dir, "models/mlp.onnx"),
		"the matrix file":     "c.yml",
		"the matrix by links": "link/../c.yml",
		// deeplink/.. is deep, where the kernel goes; cleaned first it
		// would be the project's folder, and this name the matrix file.
		"a link, then up": "deeplink/../../c.yml",
	} {
		t.Run(name, func(t *testing.T) {
			t.Chdir(dir)
			files := append(inputs(dir), File{Path: output, Role: Output, What: "--junit"})
			got := messages(t, files)
			want := "--junit " + quote(output) + " is "
			if !strings.HasPrefix(got, want) || !strings.Contains(got, "the run would write over it") {
				t.Errorf("got %q, want a refusal starting %q", got, want)
			}
		})
	}
}

func quote(s string) string { return `"` + s + `"` }

func TestOutputsApartPass(t *testing.T) {
	dir := project(t)
	files := append(inputs(dir),
		File{Path: filepath.Join(dir, "out/a.engine"), Role: Output, What: "engine", Build: "a", Pos: "c.yml:3:5"},
		File{Path: filepath.Join(dir, "trt-report.json"), Role: Output, What: "--report"},
		File{Path: filepath.Join(dir, "tc/shared.cache"), Role: Shared, What: "timing-cache", Build: "a"},
		File{Path: filepath.Join(dir, "tc/shared.cache"), Role: Shared, What: "timing-cache", Build: "b"},
		File{Path: filepath.Join(dir, ".trt-cache"), Role: Folder, What: "the engine cache folder"},
		// Streams are written through, never replaced.
		File{Path: os.DevNull, Role: Output, What: "--summary"},
		File{Path: os.DevNull, Role: Output, What: "--junit"},
	)
	if got := messages(t, files); got != "" {
		t.Errorf("outputs apart refused:\n%s", got)
	}
}

func TestOutputsThatAreEachOtherAreRefusedAtTheirPositions(t *testing.T) {
	dir := project(t)
	engine := filepath.Join(dir, "out/a.engine")
	files := append(inputs(dir),
		File{Path: engine, Role: Output, What: "engine", Noun: "the engine", Build: "a", Pos: "c.yml:5:13"},
		File{Path: filepath.Join(dir, "tc.cache"), Role: Shared, What: "timing-cache", Noun: "the timing cache", Build: "a", Pos: "c.yml:6:13"},
		File{Path: filepath.Join(dir, "tc.cache"), Role: Shared, What: "timing-cache", Noun: "the timing cache", Build: "b", Pos: "c.yml:9:13"},
		File{Path: dir + "/out/../tc.cache", Role: Output, What: "engine", Build: "c", Pos: "c.yml:12:13"},
		File{Path: engine, Role: Output, What: "--summary"},
	)
	got := messages(t, files)
	want := `c.yml:12:13: engine "` + dir + `/out/../tc.cache" of build "c" is "` + dir + `/tc.cache", the timing cache of build "a" (and of 1 other build) (at c.yml:6:13): builds may share a timing cache, but it may be nothing else; give each a path of its own` + "\n" +
		`--summary "` + engine + `" is the engine of build "a" (at c.yml:5:13): two outputs would write one file; give each a path of its own`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Every input a hundred builds share is one collision, not a hundred.
func TestAnInputOfManyBuildsIsNamedOnce(t *testing.T) {
	dir := project(t)
	model := filepath.Join(dir, "models/mlp.onnx")
	var files []File
	for _, b := range []string{"a", "b", "c"} {
		files = append(files, File{Path: model, Role: Input, Noun: "the model", Build: b, Pos: "c.yml:" + b})
	}
	files = append(files, File{Path: model, Role: Output, What: "engine", Build: "d", Pos: "c.yml:9:5"})
	want := `c.yml:9:5: engine "` + model + `" of build "d" is the model of build "a" (and of 2 other builds) (at c.yml:a): the run would write over it; give the output a path of its own`
	if got := messages(t, files); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// An output must not lie inside the engine cache folder, nor the folder
// inside a path the run writes as a file.
func TestOutputsInsideOtherOutputsAreRefused(t *testing.T) {
	dir := project(t)
	t.Chdir(dir)
	got := messages(t, []File{
		{Path: ".trt-cache", Role: Folder, What: "cache.dir", Noun: "the engine cache folder", Pos: "c.yml:2:14"},
		{Path: ".trt-cache/v1/a.engine", Role: Output, What: "engine", Noun: "the engine", Build: "a", Pos: "c.yml:4:5"},
		{Path: "out", Role: Output, What: "--report", Noun: "the report (--report)"},
		{Path: "out/cache", Role: Folder, What: "--cache", Noun: "the engine cache folder (--cache)"},
	})
	want := `c.yml:4:5: engine ".trt-cache/v1/a.engine" of build "a" lies inside ".trt-cache", the engine cache folder (at c.yml:2:14), which the run manages; put it elsewhere` + "\n" +
		`--cache "out/cache" lies inside "out", the report (--report), which the run writes as a file; give them paths apart`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false},
		{"/a/../b", "/a", false}, {"/", "/a", false}, {"/a/..b", "/a", true},
	} {
		if got := Within(filepath.Clean(c.p), c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v", c.p, c.dir, got)
		}
	}
}

// A path not there yet lands where the file system would put it: through
// the links of the part that exists, with ".." after a link taken after it.
func TestRealOfAPathNotThereYet(t *testing.T) {
	dir := linkedTree(t)
	for p, want := range map[string]string{
		"link/new/a.engine":   filepath.Join(dir, "deep/er/new/a.engine"),
		"link/../b.engine":    filepath.Join(dir, "deep/b.engine"),
		dir + "/./x/../y.txt": filepath.Join(dir, "y.txt"),
	} {
		if got := Real(p); got != want {
			t.Errorf("Real(%q) = %q, want %q", p, got, want)
		}
	}
}

// link makes new another name (a hard link) of old, both under dir.
func link(t *testing.T, dir, old, new string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, new)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, old), filepath.Join(dir, new)); err != nil {
		t.Fatal(err)
	}
}

// An output is replaced by a rename, which changes the one name written:
// another name of the old file (a hard link, as the previous release
// delivered cache hits) keeps its content, so hard links are no collision.
func TestHardLinksOfOutputsReplacedByARenamePass(t *testing.T) {
	dir := project(t)
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "out/mlp.engine"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link(t, dir, "out/mlp.engine", "out/mlp2.engine")
	link(t, dir, "models/mlp.onnx", "hard.onnx")
	link(t, dir, "out/mlp.engine", "tc.cache")
	files := append(inputs(dir),
		File{Path: filepath.Join(dir, "out/mlp.engine"), Role: Output, What: "engine", Noun: "the engine", Build: "mlp", Pos: "c.yml:5:5"},
		File{Path: filepath.Join(dir, "out/mlp2.engine"), Role: Output, What: "engine", Noun: "the engine", Build: "mlp2", Pos: "c.yml:8:5"},
		File{Path: filepath.Join(dir, "tc.cache"), Role: Shared, What: "timing-cache", Noun: "the timing cache", Build: "mlp2", Pos: "c.yml:9:5"},
		File{Path: filepath.Join(dir, "hard.onnx"), Role: Output, What: "--report", Noun: "the report (--report)"},
	)
	if got := messages(t, files); got != "" {
		t.Errorf("hard links of outputs replaced by a rename refused:\n%s", got)
	}
}

// A file written in place ($GITHUB_OUTPUT) changes under every name it
// has: a hard link of it that is an input or another output is refused,
// naming both names and what to do.
func TestAFileWrittenInPlaceIsRefusedUnderEveryName(t *testing.T) {
	dir := project(t)
	link(t, dir, "c.yml", "gh/output")
	link(t, dir, "c.yml", "out/a.engine")
	files := append(inputs(dir),
		File{Path: filepath.Join(dir, "out/a.engine"), Role: Output, What: "engine", Noun: "the engine", Build: "a", Pos: "c.yml:7:5"},
		File{Path: filepath.Join(dir, "gh/output"), Role: Appended, What: "$GITHUB_OUTPUT", Noun: "the step outputs ($GITHUB_OUTPUT)"},
	)
	output, matrix, engine := quote(filepath.Join(dir, "gh/output")), quote(filepath.Join(dir, "c.yml")), quote(filepath.Join(dir, "out/a.engine"))
	want := `$GITHUB_OUTPUT ` + output + ` is a hard link of ` + matrix + `, the matrix file (one file under two names), and $GITHUB_OUTPUT ` + output +
		` is written in place, so the other name would change too; make one of them a file of its own (a copy, not a link)` + "\n" +
		`$GITHUB_OUTPUT ` + output + ` is a hard link of ` + engine + `, the engine of build "a" (at c.yml:7:5) (one file under two names), and $GITHUB_OUTPUT ` + output +
		` is written in place, so the other name would change too; make one of them a file of its own (a copy, not a link)`
	if got := messages(t, files); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A folder that folds case gives one entry two names, which no hard link
// does: both are one file, and two outputs there are refused.
func TestOneEntryUnderTwoNamesIsRefused(t *testing.T) {
	dir := project(t)
	link(t, dir, "models/mlp.onnx", "models/MLP.onnx") // stands in for the second spelling
	defer func(list func(string) ([]string, error)) { listNames = list }(listNames)
	listNames = func(string) ([]string, error) { return []string{"mlp.onnx"}, nil } // as the folding folder lists it
	files := append(inputs(dir), File{Path: filepath.Join(dir, "models/MLP.onnx"), Role: Output, What: "--junit", Noun: "the JUnit file (--junit)"})
	want := `--junit "` + dir + `/models/MLP.onnx" is "` + dir + `/models/mlp.onnx", the model of build "mlp" (at c.yml:5:5): the run would write over it; give the output a path of its own`
	if got := messages(t, files); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Check resolves each path through its folder, remembered: the answer is
// Real's for every kind of name, links and ".." after a link included.
func TestRealPathsIsReal(t *testing.T) {
	dir := linkedTree(t)
	reals := realPaths{}
	for _, p := range []string{"link/new/a.engine", "link/../b.engine", "link/..", "filelink", "link/up/file", "deep/er/up",
		"c.yml", "./c.yml", "/", dir + "/./x/../y.txt", "deep/", "link/../../c.yml", "filelink/x"} {
		for range 2 { // once to fill the memory, once from it
			if got, want := reals.of(p), Real(p); got != want {
				t.Errorf("realPaths.of(%q) = %q, Real = %q", p, got, want)
			}
		}
	}
}

// linkedTree makes, in a new folder it makes the working folder, the
// folder deep/er and the file deep/file, with links to each (link,
// filelink) and deep/er/up to its folder's folder; it returns the folder,
// its links resolved.
func linkedTree(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "deep/er"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deep/file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"link": "deep/er", "filelink": "deep/file", "deep/er/up": ".."} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return dir
}
