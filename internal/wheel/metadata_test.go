package wheel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/wheel/wheeltest"
)

func TestMetadataText(t *testing.T) {
	description, err := os.ReadFile("testdata/description.md") // a page in docs/, as Description is
	if err != nil {
		t.Fatal(err)
	}
	m := Metadata{Version: "1.2.3rc1", RTXVersion: "1.7.1.116", Description: string(description), Ref: "v1.2.3-rc.1"}
	golden.Check(t, "METADATA.golden", m.Text())
	golden.Check(t, "WHEEL.golden", WheelText("manylinux_2_35_x86_64"))
}

func TestAbsoluteLinks(t *testing.T) {
	const base = "https://github.com/trt-action/trt-action/"
	cases := []struct{ dir, in, want string }{
		{".", "[a](docs/x.md)", "[a](" + base + "blob/REF/docs/x.md)"},
		{".", "[a](docs/x.md#part)", "[a](" + base + "blob/REF/docs/x.md#part)"},
		{".", "[a](#part)", "[a](#part)"},
		{".", "[a](/docs/x.md)", "[a](" + base + "blob/REF/docs/x.md)"},
		{".", "[a](../../x.md)", "[a](" + base + "blob/REF/x.md)"},
		{".", "![a](p.png)", "![a](" + base + "raw/REF/p.png)"},
		{".", "![a](p.png) [b](q.md)", "![a](" + base + "raw/REF/p.png) [b](" + base + "blob/REF/q.md)"},
		{".", "[a](https://x.y/z)", "[a](https://x.y/z)"},
		{".", "`[a](x.md)`", "`[a](x.md)`"},
		{".", "[r]: docs/r.md \"t\"", "[r]: " + base + "blob/REF/docs/r.md \"t\""},
		// A page in docs/: its links are relative to docs/.
		{"docs", "[a](x.md#part)", "[a](" + base + "blob/REF/docs/x.md#part)"},
		{"docs", "[a](../README.md)", "[a](" + base + "blob/REF/README.md)"},
		{"docs", "[a](../../../x.md)", "[a](" + base + "blob/REF/x.md)"},
		{"docs", "[a](/go.mod)", "[a](" + base + "blob/REF/go.mod)"},
		{"docs", "![a](img/p.png)", "![a](" + base + "raw/REF/docs/img/p.png)"},
		{"docs", "[a](#part)", "[a](#part)"},
	}
	for _, c := range cases {
		if got := AbsoluteLinks(c.in, c.dir, "REF"); got != c.want {
			t.Errorf("AbsoluteLinks(%q, %q) =\n %q, want\n %q", c.in, c.dir, got, c.want)
		}
	}
}

func TestRTXVersion(t *testing.T) {
	header := "#define TRT_MAJOR_RTX 1\n#define TRT_MINOR_RTX 07\n#define TRT_PATCH_RTX 1 //!< patch\n#define TRT_BUILD_RTX 116\n#define NV_TENSORRT_MAJOR TRT_MAJOR_RTX\n"
	if got, err := RTXVersion(header); err != nil || got != "1.7.1.116" {
		t.Errorf("RTXVersion = %q, %v; want 1.7.1.116", got, err)
	}
	_, err := RTXVersion("#define NV_TENSORRT_MAJOR 10\n#define TRT_MAJOR_RTX 1\n")
	if err == nil || !strings.Contains(err.Error(), "TRT_MINOR_RTX, TRT_PATCH_RTX, TRT_BUILD_RTX") {
		t.Errorf("a datacenter header: %v", err)
	}
}

// TestRTXVersionOfTheHeaders reads the headers the rtx backend is compiled
// against (make test sets TRT_RTX_INCLUDE), the one source of the pin.
func TestRTXVersionOfTheHeaders(t *testing.T) {
	dir := os.Getenv("TRT_RTX_INCLUDE")
	if dir == "" {
		wheeltest.Need(t, "TRT_RTX_INCLUDE", `eval "$(scripts/setup-tensorrt-rtx)" sets it`)
	}
	header, err := os.ReadFile(filepath.Join(dir, "NvInferVersion.h"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := RTXVersion(string(header))
	if err != nil {
		t.Fatal(err)
	}
	if parts := strings.Split(v, "."); len(parts) != 4 || !isDotted(v) || parts[0] == "0" {
		t.Errorf("RTXVersion = %q, want MAJOR.MINOR.PATCH.BUILD", v)
	}
}

// TestLicenseFileIsTheLicense: the repository's LICENSE, which the wheels
// and tarballs carry, is the text of the licence License names: the Apache
// License 2.0 (its standard text, from title to the end of its terms).
func TestLicenseFileIsTheLicense(t *testing.T) {
	if License != "Apache-2.0" || LicenseFile != "LICENSE" {
		t.Fatalf("License %q in %s: this test knows the text of Apache-2.0 only", License, LicenseFile)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", LicenseFile))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		"Apache License Version 2.0, January 2004 http://www.apache.org/licenses/ TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION 1. Definitions.",
		"9. Accepting Warranty or Additional Liability.",
		"END OF TERMS AND CONDITIONS",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q: not the Apache License 2.0", LicenseFile, want)
		}
	}
}
