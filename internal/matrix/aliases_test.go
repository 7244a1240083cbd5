package matrix

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A build's keys come from four sources, each winning over the ones
// before it: its defaults' trtexec line, its defaults, its own line, its
// own keys. workspace and memory-pools.workspace (and --workspace and
// --memPoolSize=workspace: in a line) are one place.
type keySource int

const (
	fromDefaultsLine keySource = iota
	fromDefaults
	fromLine
	fromBuild
)

var sourceNames = []string{"defaults' line", "defaults", "build's line", "build"}

func (s keySource) isLine() bool { return s == fromDefaultsLine || s == fromLine }

// poolEntry is one pool written by a source: as its key or flag spelling
// 0 (workspace, --workspace) or 1 (memory-pools.workspace,
// --memPoolSize=workspace:); tactic-shared has one spelling.
type poolEntry struct {
	src      keySource
	pool     string // workspace or tactic-shared
	spelling int
	mib      int64
}

func (e poolEntry) String() string {
	return fmt.Sprintf("%s %s in spelling %d", sourceNames[e.src], e.pool, e.spelling)
}

// written is how e is written in its source: a key or a flag.
func (e poolEntry) written() string {
	switch {
	case e.src.isLine() && e.pool == "tactic-shared":
		return fmt.Sprintf("--memPoolSize=tacticSharedMem:%dM", e.mib)
	case e.src.isLine() && e.spelling == 0:
		return fmt.Sprintf("--workspace=%d", e.mib)
	case e.src.isLine():
		return fmt.Sprintf("--memPoolSize=workspace:%dM", e.mib)
	case e.pool == "tactic-shared":
		return fmt.Sprintf("memory-pools: {tactic-shared: %dMiB}", e.mib)
	case e.spelling == 0:
		return fmt.Sprintf("workspace: %dMiB", e.mib)
	}
	return fmt.Sprintf("memory-pools: {workspace: %dMiB}", e.mib)
}

// poolsFile is a matrix file of one build whose sources write entries.
func poolsFile(entries ...poolEntry) string {
	var lines [4][]string
	for _, e := range entries {
		lines[e.src] = append(lines[e.src], e.written())
	}
	var b strings.Builder
	b.WriteString("version: 1\n")
	if len(lines[fromDefaults])+len(lines[fromDefaultsLine]) > 0 {
		b.WriteString("defaults:\n")
		for _, l := range lines[fromDefaults] {
			b.WriteString("  " + l + "\n")
		}
		if len(lines[fromDefaultsLine]) > 0 {
			b.WriteString("  trtexec: \"trtexec " + strings.Join(lines[fromDefaultsLine], " ") + "\"\n")
		}
	}
	b.WriteString("builds:\n  - name: b\n    backend: tensorrt\n    onnx: models/tiny.onnx\n")
	for _, l := range lines[fromBuild] {
		b.WriteString("    " + l + "\n")
	}
	if len(lines[fromLine]) > 0 {
		b.WriteString("    trtexec: \"" + strings.Join(lines[fromLine], " ") + "\"\n")
	}
	return b.String()
}

func poolsOf(t *testing.T, src string) (map[string]int64, error) {
	t.Helper()
	f, err := parseContent(filepath.Join("testdata", "pools.yml"), []byte(src))
	if err != nil {
		return nil, err
	}
	v, _ := f.Builds[0].Settings.get("memory-pools")
	pools, _ := v.(map[string]int64)
	return pools, nil
}

// TestWorkspaceSourcesAndSpellings: of two sources writing the workspace,
// whichever way each spells it, the later source wins; a pool of one
// source and another pool of any other source merge; two spellings of the
// workspace in one source are an error that names both.
func TestWorkspaceSourcesAndSpellings(t *testing.T) {
	const mib = 1 << 20
	for lo := fromDefaultsLine; lo <= fromBuild; lo++ {
		for hi := lo + 1; hi <= fromBuild; hi++ {
			for loSp := range 2 {
				for hiSp := range 2 {
					low, high := poolEntry{lo, "workspace", loSp, 1000 + int64(lo)}, poolEntry{hi, "workspace", hiSp, 1000 + int64(hi)}
					src := poolsFile(low, high)
					pools, err := poolsOf(t, src)
					if want := map[string]int64{"workspace": high.mib * mib}; err != nil || !reflect.DeepEqual(pools, want) {
						t.Errorf("%v under %v: got %v %v, want %v\n%s", high, low, pools, err, want, src)
					}
				}
				// A pool of one source merges with another pool of any
				// other, whichever is the later.
				for _, pair := range [][2]poolEntry{
					{{lo, "workspace", loSp, 1000}, {hi, "tactic-shared", 0, 2}},
					{{lo, "tactic-shared", 0, 2}, {hi, "workspace", loSp, 1000}},
				} {
					src := poolsFile(pair[0], pair[1])
					pools, err := poolsOf(t, src)
					if want := map[string]int64{"workspace": 1000 * mib, "tactic-shared": 2 * mib}; err != nil || !reflect.DeepEqual(pools, want) {
						t.Errorf("%v and %v: got %v %v, want both merged\n%s", pair[0], pair[1], pools, err, src)
					}
				}
			}
		}
	}
	for s := fromDefaultsLine; s <= fromBuild; s++ {
		for _, order := range [][2]int{{0, 1}, {1, 0}} {
			first, second := poolEntry{s, "workspace", order[0], 1000}, poolEntry{s, "workspace", order[1], 1001}
			src := poolsFile(first, second)
			_, err := poolsOf(t, src)
			var want []string
			if s.isLine() {
				want = []string{first.written() + " and " + second.written() + " both set memory-pools.workspace; keep one"}
			} else {
				// The error is at the one written later, naming where the
				// other is.
				line := strings.Count(src[:strings.Index(src, first.written())], "\n") + 1
				want = []string{"pools.yml:" + fmt.Sprint(line+1) + ":", "(at testdata/pools.yml:" + fmt.Sprint(line) + ":", "keep one"}
			}
			for _, w := range want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%s: two spellings in one source: got %v, want %q\n%s", sourceNames[s], err, w, src)
				}
			}
		}
	}
}

// TestAliasMessagesNameWhatWasWritten: a bad workspace size is reported as
// workspace, where it was written, though it is memory-pools.workspace.
func TestAliasMessagesNameWhatWasWritten(t *testing.T) {
	build := "  - {name: b, backend: tensorrt, onnx: models/tiny.onnx, workspace: lots}"
	_, err := poolsOf(t, "version: 1\nbuilds:\n"+build+"\n")
	at := fmt.Sprintf("pools.yml:3:%d: workspace: invalid size \"lots\"", strings.Index(build, "lots")+1)
	if err == nil || !strings.Contains(err.Error(), at) {
		t.Errorf("got %v", err)
	}
}
