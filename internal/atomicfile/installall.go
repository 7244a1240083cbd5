package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Files that belong together (a builder script's engines and the
// config.json they were built with, delivered from the engine cache) are
// installed together, all of them or none: InstallAll.

// Staged is a complete file, Tmp, on its way to Path: written beside it
// under a partial name (PartialName), synced.
type Staged struct {
	Tmp, Path string
}

// rename and link are os.Rename and os.Link; variables so a test can make
// one fail between two others.
var (
	rename = os.Rename
	link   = os.Link
)

// InstallAll renames every staged file to its path, as Install does one:
// all of them, or none. Every path is checked first (CheckInstall), so a
// path that cannot take its file (a link, a folder) fails the set before
// anything moves. The file now at each path is kept under a partial name
// beside it (a hard link: the path never goes missing; where the file
// system has no hard links, it is moved aside just before its
// replacement). Then the files are renamed into place in order. When one
// rename fails, every path renamed before it gets its old file back, or
// loses the new one where it had none, so the set is as it was; the error
// names the rename that failed, and any path that could not be put back
// (a second failure, which the error then names too). On success the old
// files are removed.
//
// What no error path can cover is a kill between two renames (kill -9: no
// code runs): the paths renamed by then hold the new files, the rest the
// old ones, and the old files kept aside are partial files of a dead
// process, which the next writer of each path removes (RemoveStale). The
// Tmp files of a set that was not installed are the caller's to remove.
func InstallAll(files []Staged) error {
	for _, f := range files {
		if err := CheckInstall(f.Path); err != nil {
			return err
		}
	}
	olds := make([]kept, len(files))
	defer func() {
		for _, o := range olds {
			if o.path != "" {
				_ = os.Remove(o.path) // gone already once put back
			}
		}
	}()
	for i, f := range files {
		var err error
		if olds[i], err = keepOld(f.Path); err != nil {
			return err
		}
	}
	for i, f := range files {
		err := olds[i].moveAside(f.Path)
		if err == nil {
			err = rename(f.Tmp, f.Path)
			if err != nil {
				err = errors.Join(pathError("install", f.Path, err), olds[i].undoAside(f.Path))
			}
		}
		if err != nil {
			return errors.Join(err, putBack(files[:i], olds[:i]))
		}
	}
	synced := map[string]bool{}
	for _, f := range files {
		if dir := filepath.Dir(f.Path); !synced[dir] {
			synced[dir] = true
			SyncDir(dir)
		}
	}
	return nil
}

// kept is the file that was at a path before InstallAll: path is where it
// is kept ("" when there was none); aside, that it is to be moved there
// (no hard link could be made) rather than linked.
type kept struct {
	path  string
	aside bool
	moved bool // moved aside already
}

// keepOld keeps the regular file at path, if any, under a partial name.
func keepOld(path string) (kept, error) {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return kept{}, nil
	case err != nil:
		return kept{}, err
	case !info.Mode().IsRegular():
		return kept{}, CheckInstall(path) // changed since the check: refuse it as the check would
	}
	k := kept{path: PartialName(path)}
	if err := link(path, k.path); err != nil {
		k.aside = true
	}
	return k, nil
}

// moveAside moves the old file aside where it could not be linked.
func (k *kept) moveAside(path string) error {
	if !k.aside {
		return nil
	}
	if err := rename(path, k.path); err != nil {
		return pathError("install", path, err)
	}
	k.moved = true
	return nil
}

// undoAside puts back an old file moved aside for a rename that then
// failed.
func (k *kept) undoAside(path string) error {
	if !k.moved {
		return nil
	}
	if err := rename(k.path, path); err != nil {
		return fmt.Errorf("%s could not be put back (it is at %s): %w", path, k.path, err)
	}
	k.moved = false
	return nil
}

// putBack undoes the renames of files: each path gets its old file back,
// or loses the new one where it had none.
func putBack(files []Staged, olds []kept) error {
	var errs []error
	for i := len(files) - 1; i >= 0; i-- {
		path := files[i].Path
		var err error
		if olds[i].path == "" {
			err = os.Remove(path)
		} else {
			err = rename(olds[i].path, path)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s could not be put back as it was: %w", path, err))
		}
	}
	return errors.Join(errs...)
}
