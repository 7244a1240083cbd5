package wheel

import (
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/wheel/wheeltest"
)

// TestPolicyTableAgreesWithAuditwheel compares our policy table with the
// manylinux-policy.json of the pinned auditwheel: the same policies for
// x86_64 and aarch64, the same newest numbered version and named versions
// per prefix, and the same libraries (but libz.so.1, left out on purpose).
// A new auditwheel pin with new policies fails it until the table says
// them too.
func TestPolicyTableAgreesWithAuditwheel(t *testing.T) {
	py := wheeltest.DistPython(t)
	out, err := exec.Command(py, "testdata/policy_json.py").Output()
	if err != nil {
		t.Fatalf("policy_json.py: %v", err)
	}
	data, err := os.ReadFile(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	var theirs []struct {
		Name           string                         `json:"name"`
		SymbolVersions map[string]map[string][]string `json:"symbol_versions"`
		LibWhitelist   []string                       `json:"lib_whitelist"`
	}
	if err := json.Unmarshal(data, &theirs); err != nil {
		t.Fatal(err)
	}
	ours := map[string]policy{}
	for _, p := range policies {
		ours[p.tag()] = p
	}
	seen := 0
	for _, jp := range theirs {
		for _, arch := range []string{archX86, archARM} {
			versions, ok := jp.SymbolVersions[arch]
			if !ok {
				continue
			}
			tag := jp.Name + "_" + arch
			p, ok := ours[tag]
			if !ok {
				t.Errorf("auditwheel has %s, our table does not", tag)
				continue
			}
			seen++
			for i, prefix := range versionPrefixes {
				newest, named := "", []string{}
				for _, v := range versions[prefix] {
					switch {
					case !isDotted(v):
						named = append(named, prefix+"_"+v)
					case newest == "" || compareDotted(v, newest) > 0:
						newest = v
					}
				}
				if newest != p.newest[i] {
					t.Errorf("%s: auditwheel allows %s_ up to %q, our table %q", tag, prefix, newest, p.newest[i])
				}
				var ourNamed []string
				for _, a := range p.also {
					if strings.HasPrefix(a, prefix+"_") {
						ourNamed = append(ourNamed, a)
					}
				}
				sort.Strings(named)
				sort.Strings(ourNamed)
				if len(named)+len(ourNamed) > 0 && !reflect.DeepEqual(named, ourNamed) {
					t.Errorf("%s: auditwheel's named %s_ versions %q, our table's %q", tag, prefix, named, ourNamed)
				}
			}
			var libs []string
			for l := range policyLibraries(p) {
				libs = append(libs, l)
			}
			want := []string{}
			for _, l := range jp.LibWhitelist {
				if l != "libz.so.1" {
					want = append(want, l)
				}
			}
			sort.Strings(libs)
			sort.Strings(want)
			if !reflect.DeepEqual(libs, want) {
				t.Errorf("%s: auditwheel allows the libraries %q (and libz.so.1), our table %q", tag, want, libs)
			}
		}
	}
	if seen != len(policies) {
		t.Errorf("our table has %d policies, auditwheel %d of them", len(policies), seen)
	}
}

// TestPoliciesOrdered: Tag takes the first policy that fits, so each
// architecture's policies go from the oldest glibc to the newest, each
// allowing at least what the one before it allows.
func TestPoliciesOrdered(t *testing.T) {
	last := map[string]policy{}
	for _, p := range policies {
		if prev, ok := last[p.arch]; ok {
			if p.glibcMinor <= prev.glibcMinor {
				t.Errorf("%s comes after %s", p.tag(), prev.tag())
			}
			for i := range versionPrefixes {
				if prev.newest[i] != "" && (p.newest[i] == "" || compareDotted(p.newest[i], prev.newest[i]) < 0) {
					t.Errorf("%s allows less of %s than %s", p.tag(), versionPrefixes[i], prev.tag())
				}
			}
		}
		last[p.arch] = p
	}
}
