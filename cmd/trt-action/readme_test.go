package main

// The README's examples, run against the real binary, so the README cannot
// drift from the program: the CLI block under "Using it", the forms of the
// commands table, the demo and its sample log.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const repoRoot = "../.."

func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// section is the README text under heading, up to the next heading of the
// same or a higher level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	start := strings.Index(doc, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("README has no heading %q", heading)
	}
	level := strings.Fields(heading)[0] // "##" or "###"
	rest := doc[start+len(heading)+2:]
	for i := 0; i < len(rest); {
		line, _, _ := strings.Cut(rest[i:], "\n")
		if f := strings.Fields(line); len(f) > 0 && strings.Trim(f[0], "#") == "" && len(f[0]) <= len(level) {
			return rest[:i]
		}
		i += len(line) + 1
	}
	return rest
}

// fenced returns the bodies of the ```lang blocks in text.
func fenced(text, lang string) []string {
	var blocks []string
	for _, part := range strings.Split(text, "```"+lang+"\n")[1:] {
		body, _, _ := strings.Cut(part, "```")
		blocks = append(blocks, body)
	}
	return blocks
}

// commandLines are the "trt-action ..." lines of a shell block, without
// their comments, as argument lists.
func commandLines(t *testing.T, block string) [][]string {
	t.Helper()
	var cmds [][]string
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if !strings.HasPrefix(line, "trt-action ") {
			continue
		}
		if strings.ContainsAny(line, `"'$|;&<>`) {
			t.Fatalf("README command %q needs a shell; this test runs plain words", line)
		}
		cmds = append(cmds, strings.Fields(line)[1:])
	}
	return cmds
}

// readmeMatrix has fast simulated builds, all of which succeed.
const readmeMatrix = `version: 1
defaults: {backend: sim, sim: {step: 100us}}
builds:
  - name: quick-${{ matrix.n }}
    engine: out/quick-${{ matrix.n }}.engine
    matrix: {n: [1, 2]}
`

// runIn runs the binary with args in dir and returns its exit code and
// its stdout and stderr together.
func runIn(t *testing.T, dir, stdin string, args ...string) (int, string) {
	t.Helper()
	cmd := command(dir, nil, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return exitCode(err), string(out)
}

func TestREADMEUsingItCommandsRun(t *testing.T) {
	blocks := fenced(section(t, readme(t), "## Using it"), "sh")
	if len(blocks) == 0 {
		t.Fatal(`README's "Using it" has no sh block`)
	}
	cmds := commandLines(t, blocks[0])
	// What each command of the block must do on readmeMatrix. A command the
	// README gains must be added here.
	want := map[string]struct {
		code  int
		out   string
		files []string
	}{
		"validate": {0, "trt-builds.yml: ok, 2 builds\n", nil},
		"plan":     {0, "quick-1", nil},
		"build":    {0, "■ ✅ 2 of 2 builds ok in", []string{"trt-report.json", "summary.md", "out/quick-1.engine"}},
		"version":  {0, "backends:", nil},
	}
	var verbs []string
	for _, args := range cmds {
		verbs = append(verbs, args[0])
	}
	if slices.Sort(verbs); !slices.Equal(verbs, []string{"build", "plan", "validate", "version"}) {
		t.Errorf("README's CLI block runs %v; this test knows what build, plan, validate and version must do", verbs)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), readmeMatrix)
	for _, args := range cmds {
		w, ok := want[args[0]]
		if !ok {
			t.Errorf("README command %v: no expectation in this test", args)
			continue
		}
		code, out := runIn(t, dir, "", args...)
		if code != w.code || !strings.Contains(out, w.out) {
			t.Errorf("README command %v: exit %d, want %d, with %q in:\n%s", args, code, w.code, w.out, out)
		}
		for _, f := range w.files {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("README command %v: %v", args, err)
			}
		}
	}
}

// tableRows are the rows of the first Markdown table in text, as cells.
func tableRows(text string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		// A cell may hold an escaped \|.
		line = strings.ReplaceAll(line, `\|`, "\x00")
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|")))
		}
		rows = append(rows, cells)
	}
	return rows[min(2, len(rows)):] // past the header and its rule
}

var flagName = regexp.MustCompile("--[a-z][a-z-]*")

// Every command of the table answers -h with exit 0 and has every flag
// its row names; its runnable forms run.
func TestREADMECommandsTable(t *testing.T) {
	rows := tableRows(section(t, readme(t), "### Commands"))
	if len(rows) < 7 {
		t.Fatalf("the commands table has %d rows", len(rows))
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), readmeMatrix)
	for _, row := range rows {
		form := strings.Trim(strings.Fields(row[0])[0], "`")
		code, help := runIn(t, dir, "", form, "-h")
		if code != 0 {
			t.Errorf("%s -h: exit %d, want 0\n%s", form, code, help)
		}
		for _, f := range flagName.FindAllString(strings.Join(row, " "), -1) {
			if !strings.Contains(help, "\n  "+f+" ") && !strings.Contains(help, "\n  "+f+"\n") {
				t.Errorf("README names %s for %s, which %s -h does not list:\n%s", f, form, form, help)
			}
		}
	}

	// The forms that run without a GPU, TensorRT or GitHub.
	recording := "\x1b[0G\x1b[2K[-] Building engine 0/2\n\x1b[1A\x1b[0G\x1b[2K[=] Building engine 1/2\n\x1b[1A"
	for _, c := range []struct {
		args  []string
		stdin string
		code  int
		out   string
	}{
		{[]string{"validate", "trt-builds.yml"}, "", 0, "ok, 2 builds"},
		{[]string{"plan", "--only", "quick-2", "--json"}, "", 0, `"name":"quick-2"`},
		{[]string{"plan", "--github-matrix", "--shards", "2"}, "", 0, `{"include":[{"shard":1,"of":2,`},
		{[]string{"plan", "--trtexec"}, "", 0, "# quick-1\n# not in the line: backend sim has no trtexec equivalent\n"},
		{[]string{"build", "trt-builds.yml", "--jobs", "2", "--only", "quick-1", "--report", "r.json", "--junit", "j.xml", "--events", "e.jsonl"}, "", 0, "■ ✅ 1 of 1 builds ok"},
		// quick-2 is in no report: it is missing, and that fails the merge.
		{[]string{"merge", "-f", "trt-builds.yml", "--report", "m.json", "r.json"}, "", 1, "merged 1 report, 2 builds, into m.json"},
		{[]string{"cache", "key", "--only", "quick-1"}, "", 0, "trt-engines-v1-"},
		{[]string{"cache", "ls", "--cache", "engine-cache"}, "", 2, "no engine cache at engine-cache"}, // ls creates no cache
		{[]string{"schema"}, "", 0, `"$schema"`},
		{[]string{"trace", "convert", "-"}, recording, 0, `"phase":"Building engine"`},
		{[]string{"version"}, "", 0, "sim            built in"},
	} {
		code, out := runIn(t, dir, c.stdin, c.args...)
		if code != c.code || !strings.Contains(out, c.out) {
			t.Errorf("%v: exit %d, want %d, with %q in:\n%s", c.args, code, c.code, c.out, out)
		}
	}
}

// demoCommand is the trt-action command line of the Makefile's demo target.
func demoCommand(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, recipe, ok := strings.Cut(string(data), "\ndemo: $(BIN)\n")
	if !ok {
		t.Fatal("Makefile has no demo target")
	}
	line, _, _ := strings.Cut(recipe, ";")
	_, args, ok := strings.Cut(line, "$(BIN) ")
	if !ok {
		t.Fatalf("the demo recipe does not run $(BIN): %q", line)
	}
	return strings.Fields(args)
}

// durationOrNumber matches what changes from run to run in a log line:
// times, counts, sizes, percentages.
var durationOrNumber = regexp.MustCompile(`[0-9][0-9.]*[a-zµ]*`)

// logPattern turns a line of the README's sample log into a pattern: its
// text as written, with any number or duration, any run of spaces, and
// what follows the first › of a progress line (the phases active at
// that moment) left open.
func logPattern(line string) *regexp.Regexp {
	if before, _, ok := strings.Cut(line, " › "); ok {
		line = before + " › "
	}
	var sb strings.Builder
	sb.WriteString("^")
	last := 0
	for _, m := range durationOrNumber.FindAllStringIndex(line, -1) {
		sb.WriteString(regexp.QuoteMeta(line[last:m[0]]))
		sb.WriteString(`[0-9][0-9.]*[a-zµ]*`)
		last = m[1]
	}
	sb.WriteString(regexp.QuoteMeta(line[last:]))
	p := regexp.MustCompile(` {2,}`).ReplaceAllString(sb.String(), ` +`)
	if strings.HasSuffix(line, " › ") {
		p += ".*"
	}
	return regexp.MustCompile(p + "$")
}

// The demo (make demo's command, on the simulator) does what the README
// says: five builds, one over its phase budget on purpose, exit 3, and a
// log whose every sample line has a line of the same form.
func TestREADMEDemo(t *testing.T) {
	doc := readme(t)
	two := section(t, doc, "## Two commands")
	if !strings.Contains(two, "make demo ") || !strings.Contains(two, "five simulated builds") || !strings.Contains(two, "so trt-action exits 3") {
		t.Fatalf(`"Two commands" no longer describes the demo this test checks:\n%s`, two)
	}
	args := demoCommand(t)
	dir := t.TempDir()
	// The demo runs from the repository root on examples/; a copy keeps
	// the paths (and so the log) the same.
	if out, err := exec.Command("cp", "-r", filepath.Join(repoRoot, "examples"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copying examples: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := runIn(t, dir, "", args...)
	if code != 3 {
		t.Fatalf("demo: exit %d, want 3\n%s", code, out)
	}
	var r struct {
		Builds []struct{ Name, Status string }
	}
	data, err := os.ReadFile(filepath.Join(dir, "bin/demo-report.json"))
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err != nil {
		t.Fatalf("demo report: %v", err)
	}
	over := 0
	for _, b := range r.Builds {
		if b.Status == "budget-exceeded" {
			over++
		}
	}
	if len(r.Builds) != 5 || over != 1 {
		t.Errorf("demo: %d builds, %d over budget; the README says five, one over its phase budget", len(r.Builds), over)
	}

	samples := fenced(section(t, doc, "## What you see"), "text")
	if len(samples) < 2 {
		t.Fatalf(`"What you see" has %d text blocks, want the terminal and the log samples`, len(samples))
	}
	outLines := strings.Split(out, "\n")
	for _, sample := range strings.Split(strings.TrimSpace(samples[1]), "\n") {
		p := logPattern(sample)
		if !slices.ContainsFunc(outLines, p.MatchString) {
			t.Errorf("README's log line\n  %s\nhas no line of its form (%s) in the demo's log:\n%s", sample, p, out)
		}
	}
}

// The engine cache section's commands do what their comments say, in
// order, on readmeMatrix with a setting that differs between its builds.
func TestREADMEEngineCacheCommands(t *testing.T) {
	blocks := fenced(section(t, readme(t), "## The engine cache"), "sh")
	if len(blocks) == 0 {
		t.Fatal(`README's "The engine cache" has no sh block`)
	}
	cmds := commandLines(t, blocks[0])
	want := []string{
		"■ ✅ 2 of 2 builds ok in",          // builds and stores
		"■ ✅ 2 cached — 2 builds in",       // unchanged: every build cached
		"■ ✅ 1 ok, 1 cached — 2 builds in", // --rebuild quick-2
		"■ ✅ 2 of 2 builds ok in",          // --no-cache
		"quick-2",                          // cache ls
	}
	if len(cmds) != len(want) {
		t.Fatalf("README's engine cache block has %d commands; this test knows what %d must do", len(cmds), len(want))
	}
	dir := t.TempDir()
	// Builds whose keys differ (names are not in a key: two builds alike
	// but for their names share one engine).
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), strings.Replace(readmeMatrix, "sim: {step: 100us}", `sim: {step: 100us, threads: "${{ matrix.n }}"}`, 1))
	for i, args := range cmds {
		code, out := runIn(t, dir, "", args...)
		if code != 0 || !strings.Contains(out, want[i]) {
			t.Errorf("README command %v: exit %d, want 0, with %q in:\n%s", args, code, want[i], out)
		}
	}
}
