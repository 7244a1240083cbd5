package matrix

import "path/filepath"

// Locator points each build at its entry in the matrix file at path, by
// the positions the loaded builds keep (the file is not read again): for
// annotations, which GitHub places by a workspace path with forward
// slashes. A build it does not know (a merge without -f) falls back to
// the file's first line; no file gives nil.
func Locator(path string, builds []Build) func(build string) (file string, line int) {
	if path == "" {
		return nil
	}
	pos := map[string]Pos{}
	for _, b := range builds {
		pos[b.Name] = b.Pos
	}
	return func(name string) (string, int) {
		if p, ok := pos[name]; ok && p.File != "" {
			return filepath.ToSlash(p.File), p.Line
		}
		return path, 1
	}
}
