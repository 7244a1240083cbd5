package main

// The examples of README.md and docs/*.md, run against the real binary, so
// the pages cannot drift from the program: the README's first workflow, its
// demo and sample log; each command of docs/commands.md; the matrix file's
// example and its errors; the trtexec line; the engine cache's commands;
// the event stream's example. A test finds its example by the page and the
// heading it sits under, so moving an example means moving its test's
// heading too. (recipe_test.go runs the engine cache's actions/cache
// recipes.)

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const repoRoot = "../.."

// page is the text of a Markdown page, by its path from the repository's
// root: "README.md", "docs/commands.md".
func page(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func readme(t *testing.T) string { return page(t, "README.md") }

// section is the text of doc under heading, up to the next heading of the
// same or a higher level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	start := strings.Index(doc, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("the page has no heading %q", heading)
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

func TestREADMEFirstWorkflowCommandsRun(t *testing.T) {
	blocks := fenced(section(t, readme(t), "## A first workflow"), "sh")
	if len(blocks) == 0 {
		t.Fatal(`README's "A first workflow" has no sh block`)
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

var flagName = regexp.MustCompile("--[a-z][a-z-]*")

// helpFlags are the flags a command's -h lists (-f, --name), without
// their dashes.
var helpFlag = regexp.MustCompile(`(?m)^  --?([a-z][a-z-]*)(?: |$)`)

// commandSections are docs/commands.md's sections whose heading is a
// command form in backticks ("## `cache key`"), by form.
func commandSections(t *testing.T) map[string]string {
	t.Helper()
	doc := page(t, "docs/commands.md")
	sections := map[string]string{}
	for _, line := range strings.Split(doc, "\n") {
		if form, ok := strings.CutPrefix(line, "## `"); ok && strings.HasSuffix(form, "`") {
			sections[strings.TrimSuffix(form, "`")] = section(t, doc, line)
		}
	}
	return sections
}

// Every command has a section in docs/commands.md; every flag a section
// names is one its command's -h lists, and every flag -h lists is named.
func TestCommandsPageHasEveryCommandAndFlag(t *testing.T) {
	sections := commandSections(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), readmeMatrix)

	_, usage := runIn(t, dir, "", "-h")
	_, list, _ := strings.Cut(usage, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	for _, line := range strings.Split(list, "\n") {
		cmd := strings.Fields(line)[0]
		found := false
		for form := range sections {
			found = found || strings.Fields(form)[0] == cmd
		}
		if !found {
			t.Errorf("trt-action -h lists %s, which docs/commands.md has no section for", cmd)
		}
	}
	if len(sections) < 11 {
		t.Errorf("docs/commands.md has %d command sections: %v", len(sections), slices.Collect(maps.Keys(sections)))
	}

	for form, text := range sections {
		args := append(strings.Fields(form), "-h")
		code, help := runIn(t, dir, "", args...)
		if code != 0 {
			t.Errorf("%s -h: exit %d, want 0\n%s", form, code, help)
			continue
		}
		for _, f := range flagName.FindAllString(text, -1) {
			if !strings.Contains(help, "\n  "+f+" ") && !strings.Contains(help, "\n  "+f+"\n") {
				t.Errorf("docs/commands.md names %s for %s, which %s -h does not list:\n%s", f, form, form, help)
			}
		}
		for _, m := range helpFlag.FindAllStringSubmatch(help, -1) {
			if name := m[1]; len(name) > 1 && !strings.Contains(text, "--"+name) {
				t.Errorf("%s -h lists --%s, which its section in docs/commands.md does not name", form, name)
			}
		}
	}
}

// The forms that run without a GPU, TensorRT or GitHub do what the page
// says.
func TestCommandsPageFormsRun(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), readmeMatrix)
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
		{[]string{"cache", "key", "--only", "quick-1"}, "", 0, "trt-engines-v"},                        // v and the cache format version
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

// The engine cache page's commands do what their comments say, in order,
// on readmeMatrix with a setting that differs between its builds.
func TestEngineCachePageCommands(t *testing.T) {
	blocks := fenced(section(t, page(t, "docs/engine-cache.md"), "## Turning it on"), "sh")
	if len(blocks) == 0 {
		t.Fatal(`docs/engine-cache.md's "Turning it on" has no sh block`)
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
		t.Fatalf("the engine cache page's block has %d commands; this test knows what %d must do", len(cmds), len(want))
	}
	dir := t.TempDir()
	// Builds whose keys differ (names are not in a key: two builds alike
	// but for their names share one engine).
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), strings.Replace(readmeMatrix, "sim: {step: 100us}", `sim: {step: 100us, threads: "${{ matrix.n }}"}`, 1))
	for i, args := range cmds {
		code, out := runIn(t, dir, "", args...)
		if code != 0 || !strings.Contains(out, want[i]) {
			t.Errorf("docs/engine-cache.md command %v: exit %d, want 0, with %q in:\n%s", args, code, want[i], out)
		}
	}
}

// The README's two commands are exactly make demo and make test, each a
// target of the Makefile, and .ci/run ends by running the README's test
// command.
func TestREADMETwoCommands(t *testing.T) {
	blocks := fenced(section(t, readme(t), "## Two commands"), "sh")
	if len(blocks) != 1 {
		t.Fatalf(`README's "Two commands" has %d sh blocks, want 1`, len(blocks))
	}
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(blocks[0]), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if !slices.Equal(cmds, []string{"make demo", "make test"}) {
		t.Errorf("README's two commands are %q, want make demo and make test", cmds)
	}
	makefile := page(t, "Makefile")
	for _, target := range []string{"\ndemo:", "\ntest:"} {
		if !strings.Contains(makefile, target) {
			t.Errorf("the Makefile has no %s target", strings.TrimSpace(target))
		}
	}
	run := strings.TrimSpace(page(t, ".ci/run"))
	if last := run[strings.LastIndex(run, "\n")+1:]; last != "make test" {
		t.Errorf(".ci/run ends with %q, not the README's test command (make test)", last)
	}
}

// planNames are the build names `plan` prints for the matrix in dir.
func planNames(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	code, out := runIn(t, dir, "", append([]string{"plan"}, args...)...)
	if code != 0 {
		t.Fatalf("plan %v: exit %d\n%s", args, code, out)
	}
	var names []string
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, line := range lines[1 : len(lines)-1] { // past the header, before "N builds"
		names = append(names, strings.Fields(line)[0])
	}
	return names
}

// The README's first matrix file plans to the two builds it describes.
func TestREADMEFirstWorkflowMatrixPlans(t *testing.T) {
	blocks := fenced(section(t, readme(t), "## A first workflow"), "yaml")
	if len(blocks) < 2 {
		t.Fatalf(`README's "A first workflow" has %d yaml blocks, want the matrix file and the workflow steps`, len(blocks))
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), blocks[0])
	if got := planNames(t, dir); !slices.Equal(got, []string{"resnet-fp16", "resnet-fp32"}) {
		t.Errorf("the README's matrix plans to %v, want resnet-fp16 and resnet-fp32", got)
	}
}

// docs/matrix.md's example expands to the four builds the page says, and
// each of its sample errors is what validate says of a file with those
// mistakes at those places.
func TestMatrixPageExampleAndErrors(t *testing.T) {
	doc := page(t, "docs/matrix.md")
	blocks := fenced(doc, "yaml")
	if len(blocks) == 0 || !strings.Contains(doc, "it expands to four builds") {
		t.Fatal("docs/matrix.md no longer has the example this test plans, or no longer says it expands to four builds")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), blocks[0])
	want := []string{"resnet-fp16-b1", "resnet-fp16-b8", "resnet-fp32-b1", "resnet-fp16-b32"}
	if got := planNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("docs/matrix.md's example plans to %v, want %v", got, want)
	}

	samples := fenced(section(t, doc, "## Errors"), "text")
	if len(samples) != 1 {
		t.Fatalf(`docs/matrix.md's "Errors" has %d text blocks, want 1`, len(samples))
	}
	// A backend at 4:14, a duration at 6:22, a misspelt key at 7:5.
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), "version: 1\nbuilds:\n  - name: a\n    backend: cuda\n    sim: {}\n    budgets: {build: soon}\n    bakend: x\n")
	code, out := runIn(t, dir, "", "validate")
	if code != 2 {
		t.Errorf("validate: exit %d, want 2\n%s", code, out)
	}
	for _, sample := range strings.Split(strings.TrimSpace(samples[0]), "\n") {
		line, _, _ := strings.Cut(sample, "…") // the page shortens the list of keys
		if !strings.Contains(out, "\n"+line) && !strings.HasPrefix(out, line) {
			t.Errorf("docs/matrix.md's error\n  %s\nis not what validate says:\n%s", sample, out)
		}
	}
}

// docs/builder-settings.md's trtexec line becomes one build whose written
// opt-level wins over the line, and whose inference-only flags are set
// aside, as the page says.
func TestBuilderSettingsPageTrtexecExample(t *testing.T) {
	blocks := fenced(section(t, page(t, "docs/builder-settings.md"), "## trtexec lines"), "yaml")
	if len(blocks) == 0 {
		t.Fatal(`docs/builder-settings.md's "trtexec lines" has no yaml block`)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), "version: 1\nbuilds:\n"+blocks[0])
	code, out := runIn(t, dir, "", "plan", "--trtexec")
	if code != 0 {
		t.Fatalf("plan --trtexec: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"# resnet-fp16\n",
		"# from its trtexec line, ignored (they only matter when trtexec runs the engine): --iterations --useCudaGraph\n",
		"--builderOptimizationLevel=5 ",
		" --fp16 ",
		" --maxShapes=input:32x3x224x224 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan --trtexec of the page's example has no %q:\n%s", want, out)
		}
	}
}

// docs/builder-settings.md's line with --profile=0 (a public repository's)
// validates, with its model there as validate wants every model, and plans
// with its shapes without it, as plan needs no model: one group is shapes.
func TestBuilderSettingsPageProfileLine(t *testing.T) {
	blocks := fenced(section(t, page(t, "docs/builder-settings.md"), "### Optimization profiles in a line"), "text")
	if len(blocks) != 1 || !strings.Contains(blocks[0], "--profile=0") {
		t.Fatalf(`docs/builder-settings.md's "Optimization profiles in a line" has no line with --profile=0: %q`, blocks)
	}
	line := strings.Join(strings.Fields(blocks[0]), " ")
	dir := t.TempDir()
	quoted, _ := json.Marshal(line) // a JSON string is a YAML double-quoted scalar
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), "version: 1\nbuilds:\n  - {name: fb, backend: tensorrt, trtexec: "+string(quoted)+"}\n")
	code, out := runIn(t, dir, "", "plan", "--json")
	if code != 0 {
		t.Fatalf("plan --json: exit %d\n%s", code, out)
	}
	var plan []struct {
		Settings map[string]json.RawMessage `json:"settings"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan) != 1 {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	const shapes = `{"descriptors":{"min":[1,1,256],"opt":[1,4000,256],"max":[1,8000,256]},"keypoints":{"min":[1,1,4],"opt":[1,4000,4],"max":[1,8000,4]}}`
	if got := string(plan[0].Settings["shapes"]); got != shapes || plan[0].Settings["profiles"] != nil {
		t.Errorf("the line %s plans to settings %s, want shapes %s", line, out, shapes)
	}
	if code, out := runIn(t, dir, "", "validate"); code != 2 || !strings.Contains(out, `onnx: file "feature_booster.onnx" not found`) {
		t.Errorf("validate without the model: exit %d, want 2 naming it\n%s", code, out)
	}
	writeFile(t, filepath.Join(dir, "feature_booster.onnx"), "a stand-in: validate looks for the file, not into it")
	if code, out := runIn(t, dir, "", "validate"); code != 0 {
		t.Errorf("validate: exit %d\n%s", code, out)
	}
}

// docs/matrix.md's profiles example plans to its two profiles in order,
// and plan --trtexec writes them as --profile groups.
func TestMatrixPageProfilesExample(t *testing.T) {
	blocks := fenced(section(t, page(t, "docs/matrix.md"), "### `profiles`"), "yaml")
	if len(blocks) != 1 {
		t.Fatalf("docs/matrix.md's profiles section has %d yaml blocks, want 1", len(blocks))
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), "version: 1\nbuilds:\n"+blocks[0])
	code, out := runIn(t, dir, "", "plan", "--json")
	if code != 0 {
		t.Fatalf("plan --json: exit %d\n%s", code, out)
	}
	var plan []struct {
		Settings struct {
			Profiles []map[string]struct{ Min, Opt, Max []int64 } `json:"profiles"`
		} `json:"settings"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan) != 1 {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	p := plan[0].Settings.Profiles
	if len(p) != 2 || p[0]["descriptors"].Max[1] != 1000 || p[1]["keypoints"].Opt[1] != 4000 {
		t.Errorf("profiles %+v, want the page's two in order", p)
	}
	code, out = runIn(t, dir, "", "plan", "--trtexec")
	if code != 0 || !strings.Contains(out, " --profile=0 --minShapes=descriptors:1x1x256,keypoints:1x1x4 ") ||
		!strings.Contains(out, " --profile=1 --minShapes=descriptors:1x1000x256,keypoints:1x1000x4 ") {
		t.Errorf("plan --trtexec: exit %d, want both groups:\n%s", code, out)
	}
}

// eventTypeRow is a row of docs/events.md's table of line types.
var eventTypeRow = regexp.MustCompile("^\\| `([a-z_]+)` \\|")

// docs/events.md's example lines are JSON of format version 1 with a type
// the page's table has, and every type a run writes is in that table.
func TestEventsPageExampleAndTypes(t *testing.T) {
	doc := page(t, "docs/events.md")
	types := map[string]bool{}
	for _, line := range strings.Split(section(t, doc, "## Lines"), "\n") {
		if m := eventTypeRow.FindStringSubmatch(line); m != nil {
			types[m[1]] = true
		}
	}
	if len(types) < 10 {
		t.Fatalf("docs/events.md's table has %d types: %v", len(types), types)
	}
	examples := fenced(section(t, doc, "## Example"), "json")
	if len(examples) != 1 {
		t.Fatalf(`docs/events.md's "Example" has %d json blocks, want 1`, len(examples))
	}
	checkLines := func(what, text string) {
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			var ev struct {
				V    int
				Type string
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.V != 1 || !types[ev.Type] {
				t.Errorf("%s line %s: v %d, type %q (err %v); want v 1 and a type of the page's table", what, line, ev.V, ev.Type, err)
			}
		}
	}
	checkLines("docs/events.md's example", examples[0])

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), readmeMatrix)
	if code, out := runIn(t, dir, "", "build", "--events", "e.jsonl"); code != 0 {
		t.Fatalf("build --events: exit %d\n%s", code, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "e.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	checkLines("a run's", string(data))
}
