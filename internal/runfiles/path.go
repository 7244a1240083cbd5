package runfiles

import (
	"os"
	"path/filepath"
	"strings"
)

// Abs is p absolute and clean; p as given when the working folder is gone.
func Abs(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// Real is p absolute, with the symbolic links of its longest existing
// prefix resolved and the rest kept as written: a folder not created yet
// cannot be a link, but an existing link anywhere above it decides where
// a write lands. A ".." is taken as the file system takes it, after the
// link before it (link/.. is the folder above the link's target), so the
// prefixes are tried as written, not cleaned first.
func Real(p string) string {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(p)
		}
		p = wd + string(filepath.Separator) + p
	}
	parts := strings.Split(p, string(filepath.Separator))
	for n := len(parts); n > 1; n-- {
		if real, err := filepath.EvalSymlinks(strings.Join(parts[:n], string(filepath.Separator))); err == nil {
			return filepath.Join(append([]string{real}, parts[n:]...)...)
		}
	}
	return filepath.Clean(p)
}

// Within reports whether p is dir or lies below it (both clean, absolute).
func Within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
