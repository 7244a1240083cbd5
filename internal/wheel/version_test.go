package wheel

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/wheel/wheeltest"
)

var versionCases = []struct{ in, want string }{
	// make dist VERSION=TAG
	{"v1.2.3", "1.2.3"},
	{"1.2.3", "1.2.3"},
	{"v1.2.3-rc.1", "1.2.3rc1"},
	{"v1.2.3-alpha.2", "1.2.3a2"},
	{"v1.2.3-beta", "1.2.3b0"},
	{"V2.0.0-RC1", "2.0.0rc1"},
	// git describe --tags --always --dirty after a tag (make's default)
	{"v1.2.3-4-gabc1234", "1.2.3+4.gabc1234"},
	{"v1.2.3-4-gabc1234-dirty", "1.2.3+4.gabc1234.dirty"},
	{"v1.2.3-dirty", "1.2.3+dirty"},
	{"v1.2.3-rc.1-12-g0123abcd", "1.2.3rc1+12.g0123abcd"},
	// already PEP 440, written in the normal form
	{"0.0.0+test", "0.0.0+test"},
	{"1.2.3.post1", "1.2.3.post1"},
	{"1.2.3-1", "1.2.3.post1"},
	{"1.2.3.dev4", "1.2.3.dev4"},
	{"1.0c1", "1.0rc1"},
	{"1.0-preview_2", "1.0rc2"},
	{"1!2.0", "1!2.0"},
	{"0!2.0", "2.0"},
	{"01.02.0030", "1.2.30"},
	{"1.2.3+Ubuntu-1_a.007", "1.2.3+ubuntu.1.a.7"},
	{"1.0rev", "1.0.post0"},
	{"1.0-dev", "1.0.dev0"},
	{"1.0a1.post2.dev3", "1.0a1.post2.dev3"},
}

func TestVersion(t *testing.T) {
	for _, c := range versionCases {
		got, err := Version(c.in)
		if err != nil || got != c.want {
			t.Errorf("Version(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestVersionRefuses: what has no PEP 440 form is an error naming the
// forms allowed, for make dist to show before it builds anything.
func TestVersionRefuses(t *testing.T) {
	for _, in := range []string{"dev", "test", "", "886773f", "886773f-dirty", "v1.2.3-4-gzzzz", "1.2.3+", "1.2.3+a+b", "1.2.3 rc1", "1..2", "v1.2.3-4-gabc1234-dirty-dirty"} {
		got, err := Version(in)
		if err == nil {
			t.Errorf("Version(%q) = %q, want an error", in, got)
			continue
		}
		for _, allowed := range []string{"v1.2.3", "v1.2.3-rc.1", "v1.2.3-4-gabc1234-dirty", "0.0.0+test", "PEP 440", `"` + in + `"`} {
			if !strings.Contains(err.Error(), allowed) {
				t.Errorf("Version(%q): error %q does not mention %q", in, err, allowed)
			}
		}
	}
}

// TestVersionAgreesWithPackaging: our normal forms are those of packaging,
// the library pip, twine and wheel parse versions with.
func TestVersionAgreesWithPackaging(t *testing.T) {
	py := wheeltest.DistPython(t)
	var pep440 []string
	for _, c := range versionCases {
		if v, ok := normalize(c.in); ok {
			pep440 = append(pep440, c.in, v)
		}
	}
	in, _ := json.Marshal(pep440)
	script := "import json, sys\nfrom packaging.version import Version\n" +
		"a = json.loads(sys.argv[1])\n" +
		"for raw, ours in zip(a[::2], a[1::2]):\n" +
		"    theirs = str(Version(raw))\n" +
		"    if theirs != ours: print('%s: packaging says %s, we say %s' % (raw, theirs, ours))\n"
	out, err := exec.Command(py, "-c", script, string(in)).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("packaging disagrees (%v):\n%s", err, out)
	}
	if len(pep440) < 2*15 {
		t.Errorf("only %d of the cases are PEP 440 as written", len(pep440)/2)
	}
}
