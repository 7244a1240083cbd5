// Package doccheck checks the project's Markdown pages the way a reader on
// GitHub meets them: every relative link names a file that exists and, with
// a #fragment, a heading of that page under GitHub's anchor rules; and no
// table cell is so long that the table stops being readable. CI reaches no
// web hosts, so links with a scheme (https:, mailto:) are not followed.
// Its test runs it over README.md and docs/; internal/wheel uses Links to
// make the README's relative links absolute for PyPI.
package doccheck

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Problem is one broken link or oversized cell, at its file and line.
type Problem struct {
	File string // slash-separated, relative to the root given to Check
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// MaxCellChars is the most characters a table cell may hold; a longer one
// belongs in prose or a list under the table.
const MaxCellChars = 250

// Check reads each of files (slash-separated, relative to root) and returns
// every problem in them, in file and line order.
func Check(root string, files []string) ([]Problem, error) {
	pages := map[string]*page{} // by slash path; read on first use
	load := func(rel string) (*page, error) {
		if p, ok := pages[rel]; ok {
			return p, nil
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		p := parse(string(data))
		pages[rel] = p
		return p, nil
	}
	var problems []Problem
	for _, rel := range files {
		p, err := load(rel)
		if err != nil {
			return nil, err
		}
		for _, l := range p.links {
			if msg := checkLink(root, rel, l.dest, load); msg != "" {
				problems = append(problems, Problem{rel, l.line, fmt.Sprintf("link %q: %s", l.dest, msg)})
			}
		}
		for _, c := range p.longCells {
			problems = append(problems, Problem{rel, c.line, fmt.Sprintf("a table cell of %d characters (at most %d): put the detail in prose or a list under the table", c.chars, MaxCellChars)})
		}
	}
	return problems, nil
}

// lineAnchor is GitHub's link to a line or lines of a file it shows as code.
var lineAnchor = regexp.MustCompile(`^L[0-9]+(-L[0-9]+)?$`)

// checkLink returns why dest, a link in the page at from, is broken, or "".
func checkLink(root, from, dest string, load func(string) (*page, error)) string {
	if hasScheme(dest) || strings.HasPrefix(dest, "//") {
		return "" // a web address: CI cannot reach it
	}
	target, fragment, _ := strings.Cut(dest, "#")
	target, _, _ = strings.Cut(target, "?")
	target, err := url.PathUnescape(target)
	if err != nil {
		return "not a valid path: " + err.Error()
	}
	if fragment, err = url.PathUnescape(fragment); err != nil {
		return "not a valid fragment: " + err.Error()
	}
	rel := from
	if target != "" {
		if strings.HasPrefix(target, "/") {
			rel = path.Clean(strings.TrimPrefix(target, "/")) // GitHub: from the repository's root
		} else {
			rel = path.Join(path.Dir(from), target)
		}
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			return "no such file or folder"
		}
	}
	if fragment == "" {
		return ""
	}
	if !strings.HasSuffix(rel, ".md") {
		if lineAnchor.MatchString(fragment) {
			return ""
		}
		return "an anchor into a file that is not Markdown cannot be checked"
	}
	p, err := load(rel)
	if err != nil {
		return err.Error()
	}
	if !p.anchors[fragment] {
		return fmt.Sprintf("%s has no heading with anchor #%s", rel, fragment)
	}
	return ""
}

var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

func hasScheme(dest string) bool { return scheme.MatchString(dest) }

// page is what Check needs of one Markdown file.
type page struct {
	anchors   map[string]bool
	links     []link
	longCells []cell
}

type link struct {
	line int
	dest string
	at   int // the destination's byte offset in the page
}

// Link is a link's destination as it is written in a Markdown page: at
// bytes [Start, End) of the page.
type Link struct {
	Line       int
	Dest       string
	Start, End int
}

// Links returns the destinations of a page's links ([text](dest),
// ![alt](dest), [label]: dest), in page order, leaving out fenced code
// blocks and code spans, where nothing is a link.
func Links(md string) []Link {
	var links []Link
	for _, l := range parse(md).links {
		links = append(links, Link{Line: l.line, Dest: l.dest, Start: l.at, End: l.at + len(l.dest)})
	}
	return links
}

type cell struct{ line, chars int }

var (
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	refDef     = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
)

// parse reads headings, anchors, links and table cells, leaving out fenced
// code blocks and code spans, where nothing is a link.
func parse(md string) *page {
	p := &page{anchors: map[string]bool{}}
	var slugs slugger
	fence := "" // the open fence's marker, "" outside code
	lineStart := 0
	for i, line := range strings.Split(md, "\n") {
		n, at := i+1, lineStart
		lineStart += len(line) + 1
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if f := fenceMarker(trimmed); f != "" {
			fence = f
			continue
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			p.anchors[slugs.slug(headingText(m[2]))] = true
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			p.anchors[m[1]] = true
		}
		if m := refDef.FindStringSubmatchIndex(line); m != nil {
			dest, start := line[m[2]:m[3]], m[2]
			if trimmed := strings.TrimPrefix(dest, "<"); trimmed != dest {
				dest, start = strings.TrimSuffix(trimmed, ">"), start+1
			}
			p.links = append(p.links, link{n, dest, at + start})
			continue
		}
		for _, d := range inlineLinks(withoutCodeSpans(line)) {
			p.links = append(p.links, link{n, line[d[0]:d[1]], at + d[0]})
		}
		if strings.HasPrefix(trimmed, "|") {
			for _, c := range tableCells(trimmed) {
				if chars := len([]rune(c)); chars > MaxCellChars {
					p.longCells = append(p.longCells, cell{n, chars})
				}
			}
		}
	}
	return p
}

// fenceMarker returns the run of ``` or ~~~ (three or more) that opens a
// fenced code block on line, or "".
func fenceMarker(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		run := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if run >= 3 {
			return strings.Repeat(c, run)
		}
	}
	return ""
}

// withoutCodeSpans blanks out `code spans` (of any backtick run length).
func withoutCodeSpans(line string) string {
	var sb strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			sb.WriteByte(line[i])
			i++
			continue
		}
		run := i
		for run < len(line) && line[run] == '`' {
			run++
		}
		ticks := line[i:run]
		end := strings.Index(line[run:], ticks)
		if end < 0 {
			sb.WriteString(ticks)
			i = run
			continue
		}
		sb.WriteString(strings.Repeat(" ", len(ticks)*2+end))
		i = run + end + len(ticks)
	}
	return sb.String()
}

// inlineLinks returns where the destinations of [text](dest) and
// ![alt](dest) are in line ([start, end) byte offsets), without an optional
// "title".
func inlineLinks(line string) [][2]int {
	var dests [][2]int
	for i := 0; i < len(line); i++ {
		if line[i] != ']' || i+1 >= len(line) || line[i+1] != '(' {
			continue
		}
		depth, j := 1, i+2
		for ; j < len(line) && depth > 0; j++ {
			switch line[j] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		if depth != 0 {
			continue
		}
		inner := line[i+2 : j-1]
		start := i + 2 + len(inner) - len(strings.TrimLeft(inner, " \t"))
		dest := line[start : j-1]
		if strings.HasPrefix(dest, "<") {
			start++
			dest, _, _ = strings.Cut(dest[1:], ">")
		} else {
			dest, _, _ = strings.Cut(strings.TrimRight(dest, " \t"), " ")
		}
		if dest != "" {
			dests = append(dests, [2]int{start, start + len(dest)})
		}
		i = j - 1
	}
	return dests
}

// tableCells splits a table row into its cells; \| is part of a cell.
func tableCells(row string) []string {
	row = strings.ReplaceAll(strings.TrimSpace(row), `\|`, "\x00")
	var cells []string
	for _, c := range strings.Split(strings.Trim(row, "|"), "|") {
		cells = append(cells, strings.TrimSpace(strings.ReplaceAll(c, "\x00", `\|`)))
	}
	return cells
}

var (
	inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// headingText is the text GitHub renders for a heading's Markdown: links
// become their text; code-span backticks, emphasis stars and HTML tags go.
func headingText(md string) string {
	s := inlineLink.ReplaceAllString(md, "$1")
	s = htmlTag.ReplaceAllString(s, "")
	return strings.NewReplacer("`", "", "*", "").Replace(s)
}

// slug is GitHub's anchor for a heading's text: lowercased, every character
// but letters, digits, marks, "_", "-" and spaces dropped, each space a "-".
// The rules are those of github-slugger (https://github.com/Flet/github-slugger),
// which mirrors GitHub's own.
func slug(text string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			sb.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// slugger gives a page's headings their anchors: a repeated slug gets -1,
// -2, ... in the order the headings come, skipping any already taken.
type slugger struct{ seen map[string]int }

func (s *slugger) slug(text string) string {
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	base := slug(text)
	anchor := base
	for {
		if _, taken := s.seen[anchor]; !taken {
			break
		}
		s.seen[base]++
		anchor = fmt.Sprintf("%s-%d", base, s.seen[base])
	}
	s.seen[anchor] = 0
	return anchor
}
