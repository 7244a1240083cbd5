package wheel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Sources are the folders one wheel is made of.
type Sources struct {
	// Stage is one platform's folder as scripts/dist stages it: the
	// trt-action binary and lib/*.so, its backends.
	Stage string
	// Python is copied whole into the wheel's root: the trt_action package,
	// trt_action.pth and trt_action.start (internal/pyhook/wheel).
	Python string
	// Hook is the script hook's package (internal/pyhook/py/trt_action_hook):
	// its .py files go into the wheel as trt_action_hook/.
	Hook string
	// License is the licence's text (the repository's LICENSE): the wheel
	// holds it as .dist-info/licenses/LICENSE, which METADATA's
	// License-File names (PEP 639).
	License string
}

// Binary is the program's name: the stage's file and the command pip puts
// on PATH.
const Binary = "trt-action"

// File modes in the wheel, whatever the umask: pip keeps the executable
// bit of a script and the wheel's zip records each mode, so fixed modes are
// part of making the same bytes twice.
const (
	execMode = 0o755
	fileMode = 0o644
	dirMode  = 0o755
)

// Layout writes into dir (an empty folder) the tree `wheel pack` makes a
// wheel of, and returns that wheel's platform tag:
//
//	trt_action-V.data/scripts/trt-action               the binary (pip: PREFIX/bin)
//	trt_action-V.data/data/lib/trt-action/libtam_*.so  its backends (PREFIX/lib/trt-action,
//	                                                   where the binary looks for them)
//	trt_action_hook/*.py                               the script hook
//	everything in Sources.Python                       trt_action/, trt_action.pth, .start
//	trt_action-V.dist-info/METADATA, WHEEL             (wheel pack writes RECORD)
//	trt_action-V.dist-info/licenses/LICENSE            the licence METADATA names
//
// The sources are read through os.Root, so no symbolic link leads out of
// them, and a link inside them is refused: a wheel holds files only. The
// binary and backends must be stripped (CheckStripped).
func Layout(dir string, src Sources, meta Metadata) (string, error) {
	t := &tree{dir: dir, written: map[string]bool{}}
	stage, err := os.OpenRoot(src.Stage)
	if err != nil {
		return "", err
	}
	defer stage.Close()

	elfFiles, err := stageFiles(stage, src.Stage)
	if err != nil {
		return "", err
	}
	data := DistName + "-" + meta.Version + ".data"
	staged := []stagedFile{{Binary, data + "/scripts/" + Binary, execMode}}
	for _, rel := range elfFiles[1:] {
		staged = append(staged, stagedFile{rel, data + "/data/lib/trt-action/" + path.Base(rel), fileMode})
	}
	needs := make([]Needs, 0, len(staged))
	for _, f := range staged {
		content, err := readFile(stage, src.Stage, f.from)
		if err != nil {
			return "", err
		}
		n, err := ReadNeeds(f.from, bytes.NewReader(content))
		if err != nil {
			return "", err
		}
		needs = append(needs, n)
		if err := CheckStripped(f.from, bytes.NewReader(content)); err != nil {
			return "", fmt.Errorf("%s: %w", src.Stage, err)
		}
		if err := t.write(f.to, content, f.mode); err != nil {
			return "", err
		}
	}
	tag, err := Tag(needs)
	if err != nil {
		return "", err
	}

	if err := t.copyTree(src.Python, "", func(string) bool { return true }); err != nil {
		return "", err
	}
	isPython := func(name string) bool { return strings.HasSuffix(name, ".py") }
	if err := t.copyTree(src.Hook, "trt_action_hook", isPython); err != nil {
		return "", err
	}
	info := DistName + "-" + meta.Version + ".dist-info"
	if err := t.write(info+"/METADATA", []byte(meta.Text()), fileMode); err != nil {
		return "", err
	}
	if err := t.write(info+"/WHEEL", []byte(WheelText(tag)), fileMode); err != nil {
		return "", err
	}
	if err := t.copyFileTo(src.License, info+"/licenses/"+LicenseFile); err != nil {
		return "", err
	}
	return tag, nil
}

// stagedFile is one ELF file of the stage and where it goes in the wheel.
type stagedFile struct {
	from, to string // the stage's relative path; the wheel's slash path
	mode     os.FileMode
}

// ReadStage reads what each ELF file of a stage needs: a folder holding
// the binary and lib/*.so, as scripts/dist stages one platform and its
// tarball holds it. The binary comes first, then the backends by name.
func ReadStage(dir string) ([]Needs, error) {
	stage, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer stage.Close()
	files, err := stageFiles(stage, dir)
	if err != nil {
		return nil, err
	}
	needs := make([]Needs, 0, len(files))
	for _, rel := range files {
		content, err := readFile(stage, dir, rel)
		if err != nil {
			return nil, err
		}
		n, err := ReadNeeds(rel, bytes.NewReader(content))
		if err != nil {
			return nil, err
		}
		needs = append(needs, n)
	}
	return needs, nil
}

// stageFiles lists a stage's ELF files, relative to it: the binary, then
// each backend in lib/ by name.
func stageFiles(stage *os.Root, name string) ([]string, error) {
	libs, err := stageLibraries(stage, name)
	if err != nil {
		return nil, err
	}
	files := []string{Binary}
	for _, l := range libs {
		files = append(files, "lib/"+l)
	}
	return files, nil
}

// stageLibraries lists the backends in the stage's lib/, sorted.
func stageLibraries(stage *os.Root, name string) ([]string, error) {
	entries, err := fs.ReadDir(stage.FS(), "lib")
	if err != nil {
		return nil, fmt.Errorf("%s: the backends' folder: %w", name, err)
	}
	var libs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".so") {
			libs = append(libs, e.Name())
		}
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("%s/lib holds no backend (*.so)", name)
	}
	sort.Strings(libs)
	return libs, nil
}

// readFile reads the regular file rel inside root (named name in messages).
func readFile(root *os.Root, name, rel string) ([]byte, error) {
	info, err := root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s is not a regular file (%v); a wheel holds files only", name, rel, info.Mode().Type())
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// copyFileTo copies the regular file at path (not through a link) into the
// tree at the slash path to.
func (t *tree) copyFileTo(path, to string) error {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer root.Close()
	content, err := readFile(root, filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	return t.write(to, content, fileMode)
}

// tree is the folder Layout fills.
type tree struct {
	dir     string
	written map[string]bool // slash paths in the wheel
}

// write puts content at the slash path rel in the tree with mode perm.
func (t *tree) write(rel string, content []byte, perm os.FileMode) error {
	if t.written[rel] {
		return fmt.Errorf("two sources put a file at %s in the wheel", rel)
	}
	t.written[rel] = true
	full := filepath.Join(t.dir, filepath.FromSlash(rel))
	if err := t.mkdirs(path.Dir(rel)); err != nil {
		return err
	}
	if err := os.WriteFile(full, content, perm); err != nil {
		return err
	}
	return os.Chmod(full, perm) // WriteFile's mode went through the umask
}

// mkdirs makes the slash path rel and its parents in the tree, each 0755.
func (t *tree) mkdirs(rel string) error {
	if rel == "." {
		return nil
	}
	if err := t.mkdirs(path.Dir(rel)); err != nil {
		return err
	}
	full := filepath.Join(t.dir, filepath.FromSlash(rel))
	if err := os.Mkdir(full, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Chmod(full, dirMode)
}

// copyTree copies the files of folder src that keep accepts into the tree
// under the slash path to, leaving out Python's caches (__pycache__, .pyc),
// which the interpreter writes beside sources and the wheel must not hold.
func (t *tree) copyTree(src, to string, keep func(name string) bool) error {
	root, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() && d.Name() == "__pycache__":
			return fs.SkipDir
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s: %s is a symbolic link; a wheel holds files only", src, rel)
		case strings.HasSuffix(rel, ".pyc") || !keep(d.Name()):
			return nil
		}
		content, err := readFile(root, src, rel)
		if err != nil {
			return err
		}
		return t.write(path.Join(to, rel), content, fileMode)
	})
}
