package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate and plan take a matrix with a build that runs a command
// without running it: plan shows the command, quoted for a shell, with
// its workdir and the names (not the values) of its env, and plan --json
// says it has no cache key without inputs:; what the file does not make invalid
// (defaults' settings, $VAR in run:) reaches stderr as warnings.
func TestValidateAndPlanScriptBuilds(t *testing.T) {
	dir := inDir(t, map[string]string{"trt-builds.yml": `version: 1
defaults: {backend: tensorrt, opt-level: 3}
builds:
  - name: s
    run: touch ran "a b" $HOME
    env: {TOKEN: hush}
    engine: out/s.engine
`})
	c, out, errb := userCommand("")
	if code := c.Main([]string{"validate"}); code != ExitOK || out.String() != "trt-builds.yml: ok, 1 build\n" ||
		!strings.Contains(errb.String(), "trt-builds.yml:2:31: warning: defaults: opt-level: not for builds with run:") ||
		!strings.Contains(errb.String(), "trt-builds.yml:5:26: warning: run: $HOME is passed to the program as written") {
		t.Errorf("validate: exit %d\n%s%s", code, out, errb)
	}
	c, out, errb = userCommand("")
	if code := c.Main([]string{"plan"}); code != ExitOK ||
		!strings.Contains(out.String(), "\ncommands (builds with run:, cached only with inputs:):\ns: touch ran 'a b' '$HOME'\n  workdir: "+dir+"\n  env: TOKEN\n") ||
		strings.Contains(out.String(), "hush") {
		t.Errorf("plan: exit %d\n%s%s", code, out, errb)
	}
	c, out, errb = userCommand("")
	if code := c.Main([]string{"plan", "--json"}); code != ExitOK ||
		!strings.Contains(out.String(), `"script":{"run":["touch","ran","a b","$HOME"],"workdir":"`+dir+`","env":["TOKEN"],"engines":["out/s.engine"]}`) ||
		!strings.Contains(out.String(), `"cache_key":null,"cache_key_unknown":"not cached: a build with run: is cached only when it declares the files that decide its engines (inputs:)"`) || strings.Contains(out.String(), "hush") {
		t.Errorf("plan --json: exit %d\n%s%s", code, out, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("validate or plan ran the command")
	}
}
