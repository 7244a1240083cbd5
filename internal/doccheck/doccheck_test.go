package doccheck

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The project's own pages: README.md, the other top-level pages and docs/.
func TestRepositoryPages(t *testing.T) {
	const root = "../.."
	var files []string
	for _, pattern := range []string{"*.md", "docs/*.md"} {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			rel, _ := filepath.Rel(root, m)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	if !slices.Contains(files, "README.md") || !slices.Contains(files, "docs/architecture.md") {
		t.Fatalf("found %v; want README.md and docs/*.md", files)
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// The checker fails on each kind of broken link and oversized cell in the
// fixture, and on nothing else there.
func TestFixture(t *testing.T) {
	problems, err := Check("testdata/site", []string{"README.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		`README.md:10: link "docs/nope.md": no such file or folder`,
		`README.md:11: link "docs/page.md#no-such-heading": docs/page.md has no heading with anchor #no-such-heading`,
		`README.md:12: link "docs/page.md#Usage": docs/page.md has no heading with anchor #Usage`,
		`README.md:13: link "docs/page.md#usage-2": docs/page.md has no heading with anchor #usage-2`,
		`README.md:14: link "../outside.md": points outside the repository`,
		`README.md:15: link "docs/code.txt#main": an anchor into a file that is not Markdown cannot be checked`,
		`README.md:21: link "docs/missing-ref.md": no such file or folder`,
		`README.md:25: a table cell of 251 characters (at most 250): put the detail in prose or a list under the table`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// GitHub's anchors, as github-slugger's fixtures and GitHub's pages show them.
func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Event stream (`--events FILE`)", "event-stream---events-file"},
		{"The engine cache in GitHub Actions", "the-engine-cache-in-github-actions"},
		{"What's new?", "whats-new"},
		{"`build_finished`", "build_finished"},
		{"C++ & Go", "c--go"},
		{"Привет non-latin 你好", "привет-non-latin-你好"},
		{"😄 emoji", "-emoji"},
		{"[A link](x.md) and **bold**", "a-link-and-bold"},
		{"`cache key`", "cache-key"},
	} {
		if got := slug(headingText(c.heading)); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

// Repeated headings get -1, -2, ... in order; a heading whose own slug is a
// suffixed one takes it first, and the repeat skips past it.
func TestDuplicateHeadings(t *testing.T) {
	var s slugger
	var got []string
	for _, h := range []string{"foo", "foo", "bar", "foo", "foo-3", "foo"} {
		got = append(got, s.slug(h))
	}
	want := []string{"foo", "foo-1", "bar", "foo-2", "foo-3", "foo-4"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestLinks checks that Links finds each link outside code and says where
// its destination is written, so a caller can rewrite it in place.
func TestLinks(t *testing.T) {
	md := "# T\n\nSee [the docs](docs/a.md#x \"title\") and ![logo]( <img/l.png> ).\n" +
		"`[not](code.md)` and [b](#anchor)\n```\n[not](fenced.md)\n```\n[ref]: <docs/r.md>\n[ref2]: https://e.x/y\n"
	got := Links(md)
	want := []string{"docs/a.md#x", "img/l.png", "#anchor", "docs/r.md", "https://e.x/y"}
	if len(got) != len(want) {
		t.Fatalf("Links found %+v, want the destinations %q", got, want)
	}
	for i, l := range got {
		if l.Dest != want[i] || md[l.Start:l.End] != want[i] {
			t.Errorf("link %d: Dest %q at [%d,%d) = %q, want %q there", i, l.Dest, l.Start, l.End, md[l.Start:l.End], want[i])
		}
	}
	if got[0].Line != 3 || got[3].Line != 8 {
		t.Errorf("lines %d and %d, want 3 and 8", got[0].Line, got[3].Line)
	}
}
