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
			return nil, fmt.Errorf("bad build pattern %s: %v", quotePattern(pattern), err)
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
	// --only may hold thousands of patterns or a huge one (a pasted file):
	// the error quotes a few, each of a readable size.
	shown := patterns[:min(len(patterns), maxListed)]
	quoted := make([]string, len(shown))
	for i, p := range shown {
		quoted[i] = quotePattern(p)
		if len(p) <= maxQuotedPattern {
			if s := closest(p, names); s != "" {
				quoted[i] += fmt.Sprintf(" (did you mean %q?)", s)
			}
		}
	}
	return fmt.Errorf("%s: no build matches %s%s; builds: %s%s",
		f.Path, strings.Join(quoted, ", "), andMore(len(patterns), len(shown)),
		strings.Join(names[:min(len(names), maxListed)], ", "), andMore(len(names), maxListed))
}

// maxQuotedPattern is the longest --only pattern an error quotes whole.
const maxQuotedPattern = 200

// quotePattern quotes a pattern for an error, or, when it is too long to
// read, says how long it is.
func quotePattern(p string) string {
	if len(p) > maxQuotedPattern {
		return fmt.Sprintf("(a pattern of %d bytes)", len(p))
	}
	return fmt.Sprintf("%q", p)
}

// andMore is " and N more" when fewer than total items were listed.
func andMore(total, listed int) string {
	if total <= listed {
		return ""
	}
	return fmt.Sprintf(" and %d more", total-listed)
}
