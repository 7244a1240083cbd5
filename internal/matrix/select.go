package matrix

import (
	"fmt"
	"path"
	"strings"
)

// Select returns the builds whose names match any of only (exact names or
// path.Match globs), in file order. An empty only selects every build. A
// pattern that matches nothing is an error naming some valid builds.
func (f *File) Select(only []string) ([]Build, error) {
	if len(only) == 0 {
		return f.Builds, nil
	}
	picked := make([]bool, len(f.Builds))
	var unmatched []string
	for _, pattern := range only {
		if _, err := path.Match(pattern, ""); err != nil {
			return nil, fmt.Errorf("bad build pattern %q: %v", pattern, err)
		}
		found := false
		for i, b := range f.Builds {
			if ok, _ := path.Match(pattern, b.Name); ok {
				picked[i], found = true, true
			}
		}
		if !found {
			unmatched = append(unmatched, pattern)
		}
	}
	if len(unmatched) > 0 {
		return nil, f.unknownBuilds(unmatched)
	}
	var out []Build
	for i, b := range f.Builds {
		if picked[i] {
			out = append(out, b)
		}
	}
	return out, nil
}

// maxListed bounds how many build names an error lists.
const maxListed = 10

func (f *File) unknownBuilds(patterns []string) error {
	names := make([]string, len(f.Builds))
	for i, b := range f.Builds {
		names[i] = b.Name
	}
	quoted := make([]string, len(patterns))
	for i, p := range patterns {
		quoted[i] = fmt.Sprintf("%q", p)
		if s := closest(p, names); s != "" {
			quoted[i] += fmt.Sprintf(" (did you mean %q?)", s)
		}
	}
	listed := names
	more := ""
	if len(listed) > maxListed {
		listed, more = listed[:maxListed], fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	return fmt.Errorf("%s: no build matches %s; builds: %s%s",
		f.Path, strings.Join(quoted, ", "), strings.Join(listed, ", "), more)
}
