package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
)

// Builds with run: in the engine cache show as builds without run: do: a
// hit's row says where its files came from and what it saved, a build
// that was not stored says why (its warning), and JUnit has each one's
// key, hit and where it came from.
func TestCachedScriptsSummaryGolden(t *testing.T) {
	s := Summary(cachedScripts(), SummaryOptions{})
	golden.Check(t, "summary-cached-scripts.golden.md", s)
	for _, want := range []string{
		"| trtllm-llama | ♻️ cached | tensorrt-rtx | 9.2s | cached: from the shared cache, built 2 days ago in 38m0s |",
		"- ⚠️ polygraphy: not stored: output out/model.json is left from before this build",
		"Outputs:\n\n- yolo11n.json · 812 B",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}

func TestCachedScriptsJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, cachedScripts()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "junit-cached-scripts.golden.xml", buf.String())
	for _, want := range []string{
		"(engine from the engine cache, key " + strings.Repeat("f", 64) + ")",
		`<property name="trt-action.cache.from" value="remote"></property>`,
		"engine: engines/rank1.engine (2100000000 bytes, sha256 a1)&#xA;output: engines/config.json (6400 bytes, sha256 c0)",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %s in\n%s", want, buf.String())
		}
	}
}
