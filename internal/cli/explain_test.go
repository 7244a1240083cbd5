package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/cache"
)

// cache key --explain prints each build's key with every part that went
// into it; the part that two matrices differ in is the line that
// differs. --json gives the same as JSON.
func TestCacheKeyExplain(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": cacheMatrix,
		"changed.yml": strings.Replace(cacheMatrix, "threads: 2", "threads: 3", 1)})
	code, out, errb := runCacheCommand(t, "key", "--explain")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{"\n  backend  ", "  sim.threads  2\n", "  library "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if !strings.Contains(errb, cache.NotInAKey) {
		t.Errorf("stderr does not say what no key holds: %q", errb)
	}
	_, changed, _ := runCacheCommand(t, "key", "--explain", "-f", "changed.yml")
	var differ []string
	a, b := strings.Split(out, "\n"), strings.Split(changed, "\n")
	for i := range a {
		if a[i] != b[i] {
			differ = append(differ, strings.Fields(a[i])[0])
		}
	}
	if strings.Join(differ, " ") != "b sim.threads" {
		t.Errorf("lines that differ begin %v, want b's key and sim.threads", differ)
	}
	code, js, _ := runCacheCommand(t, "key", "--explain", "--json", "--only", "a")
	var got []cache.ExplainedKey
	if err := json.Unmarshal([]byte(js), &got); code != ExitOK || err != nil || len(got) != 1 || got[0].Build != "a" || !got[0].Key.Valid() || len(got[0].Parts) == 0 {
		t.Errorf("--json: exit %d, %v, %+v", code, err, got)
	}
	for _, args := range [][]string{{"key", "--explain", "--prefix"}, {"key", "--json"}} {
		if code, _, errb := runCacheCommand(t, args...); code != ExitInvalid {
			t.Errorf("%v: exit %d, %s; want a usage error", args, code, errb)
		}
	}
}
