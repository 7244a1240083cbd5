package wheel

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/doccheck"
)

const (
	// Project is the distribution's name on PyPI (pip install trt-action).
	Project = "trt-action"
	// DistName is the name in the wheel's file and folder names: the
	// project's name normalized with "-" as "_" (PyPA's binary distribution
	// format, https://packaging.python.org/en/latest/specifications/binary-distribution-format/).
	DistName = "trt_action"

	// License is the project's licence as an SPDX expression: the wheel's
	// License-Expression (PEP 639) and the release SBOM's licence
	// (scripts/dist asks mkwheel -license for it).
	License = "Apache-2.0"
	// LicenseFile is the licence's text at the repository's root, which the
	// tarballs hold beside the binary and a wheel under
	// .dist-info/licenses/ (PEP 639).
	LicenseFile = "LICENSE"

	repository = "https://github.com/trt-action/trt-action"
	summary    = "Build NVIDIA TensorRT engines in CI from a build matrix, and see every build while it runs: phases, budgets, cancel, reports"
	// Description is the wheel's long description, its page on PyPI: a
	// page for users of the package (install, a first run, links), where
	// the README is the repository's front door, developers' commands
	// included. Its relative links are made absolute (AbsoluteLinks).
	Description = "docs/pypi.md"
)

// pythons are the Python versions the wheel has been tried on (installed
// with pip, --user, --prefix, uv and pipx, and run), its classifiers; the
// first is Requires-Python's floor: the hook needs 3.7 (internal/pyhook), and the
// wheel's trt_action package finds its binary with importlib.metadata
// (3.8).
var pythons = []string{"3.8", "3.9", "3.10", "3.11", "3.12", "3.13"}

// Metadata is what a wheel's METADATA file says.
type Metadata struct {
	Version    string // normalized PEP 440 (Version's result)
	RTXVersion string // the TensorRT-RTX the backend is compiled against (RTXVersion's result)
	// Description is the long description's Markdown as in the
	// repository (the file Description names).
	Description string
	Ref         string // the git tag or commit the description's relative links point into
}

// Text is the METADATA file (core metadata 2.4,
// https://packaging.python.org/en/latest/specifications/core-metadata/,
// the first version with License-Expression and License-File, PEP 639):
// the page Description names, its relative links made absolute, is the
// description. Project-URL labels are the ones PyPI shows with icons
// (https://docs.pypi.org/project_metadata/); Changelog is the releases
// page, whose notes are the project's changelog.
func (m Metadata) Text() string {
	var b strings.Builder
	field := func(name, value string) { fmt.Fprintf(&b, "%s: %s\n", name, value) }
	field("Metadata-Version", "2.4")
	field("Name", Project)
	field("Version", m.Version)
	field("Summary", summary)
	field("License-Expression", License)
	field("License-File", LicenseFile)
	field("Keywords", strings.Join(keywords(), ","))
	field("Project-URL", "Homepage, "+repository)
	field("Project-URL", "Documentation, "+repository+"/blob/"+m.Ref+"/README.md")
	field("Project-URL", "Source, "+repository+"/tree/"+m.Ref)
	field("Project-URL", "Changelog, "+repository+"/releases")
	field("Project-URL", "Issues, "+repository+"/issues")
	field("Classifier", "Environment :: GPU :: NVIDIA CUDA")
	field("Classifier", "Intended Audience :: Developers")
	field("Classifier", "Operating System :: POSIX :: Linux")
	field("Classifier", "Programming Language :: Python :: 3")
	field("Classifier", "Programming Language :: Python :: 3 :: Only")
	for _, v := range pythons {
		field("Classifier", "Programming Language :: Python :: "+v)
	}
	field("Classifier", "Topic :: Software Development :: Build Tools")
	field("Requires-Python", ">="+pythons[0])
	// The rtx backend dlopens the library it was compiled against; NVIDIA
	// publishes that wheel (the registry's Library.Wheel) for x86_64 only,
	// so on arm64 the extra is empty and the same metadata serves both
	// wheels.
	rtx := backend.Of(backend.TensorRTRTX).Library
	field("Provides-Extra", rtx.Extra)
	field("Requires-Dist", fmt.Sprintf(`%s==%s; extra == "%s" and platform_machine == "x86_64"`, rtx.Wheel, m.RTXVersion, rtx.Extra))
	field("Description-Content-Type", "text/markdown; charset=UTF-8; variant=GFM")
	b.WriteString("\n")
	b.WriteString(AbsoluteLinks(m.Description, path.Dir(Description), m.Ref))
	return b.String()
}

// keywords are what PyPI's search finds the project by: the backends that
// build real engines, by their names, and what it is for.
func keywords() []string {
	var out []string
	for _, b := range backend.All() {
		if !b.Simulated {
			out = append(out, b.Name)
		}
	}
	return append(out, "onnx", "ci", "github-actions")
}

// WheelText is the WHEEL file of a wheel whose platform tag is platform
// (PyPA's binary distribution format): not pure Python, any Python 3.
func WheelText(platform string) string {
	return "Wheel-Version: 1.0\n" +
		"Generator: trt-action internal/wheel/mkwheel\n" +
		"Root-Is-Purelib: false\n" +
		"Tag: py3-none-" + platform + "\n"
}

var hasScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// AbsoluteLinks rewrites the relative links of md, a page in the
// repository's folder dir ("." for the root), to point into the repository
// on GitHub at ref, as a page on PyPI needs: in docs/, x.md becomes
// https://github.com/trt-action/trt-action/blob/REF/docs/x.md, an image
// .../raw/REF/... (a blob link is a page, not the picture). Links with a
// scheme and #anchors into the page itself stay as they are.
func AbsoluteLinks(md, dir, ref string) string {
	var b strings.Builder
	last := 0
	for _, l := range doccheck.Links(md) {
		dest := l.Dest
		if dest == "" || strings.HasPrefix(dest, "#") || strings.HasPrefix(dest, "//") || hasScheme.MatchString(dest) {
			continue
		}
		target, rest := dest, ""
		if i := strings.IndexAny(dest, "?#"); i >= 0 {
			target, rest = dest[:i], dest[i:]
		}
		if !strings.HasPrefix(target, "/") { // "/x" is from the root
			target = dir + "/" + target
		}
		clean := path.Clean("/" + target)[1:] // from the root; ".." cannot climb out
		kind := "blob"
		if isImage(md, l.Start) {
			kind = "raw"
		}
		b.WriteString(md[last:l.Start])
		b.WriteString(repository + "/" + kind + "/" + ref + "/" + clean + rest)
		last = l.End
	}
	b.WriteString(md[last:])
	return b.String()
}

// isImage reports whether the link whose destination starts at start is
// an image, ![alt](dest): right before it, "](" closes a "![".
func isImage(md string, start int) bool {
	before := strings.TrimRight(md[:start], " \t<")
	if !strings.HasSuffix(before, "](") {
		return false
	}
	bracket := strings.LastIndex(before, "[")
	return bracket > 0 && md[bracket-1] == '!'
}

// RTXVersion reads the TensorRT-RTX version (MAJOR.MINOR.PATCH.BUILD, as
// NVIDIA numbers the tensorrt-rtx-cu12-libs wheel) out of NvInferVersion.h's
// text: the one source of the rtx extra's pin, the headers the backend is
// compiled against.
func RTXVersion(header string) (string, error) {
	parts := []string{"TRT_MAJOR_RTX", "TRT_MINOR_RTX", "TRT_PATCH_RTX", "TRT_BUILD_RTX"}
	found := map[string]string{}
	for _, line := range strings.Split(header, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "#define" && isDotted(f[2]) && !strings.Contains(f[2], ".") {
			found[f[1]] = number(f[2])
		}
	}
	var v, missing []string
	for _, p := range parts {
		if found[p] == "" {
			missing = append(missing, p)
		}
		v = append(v, found[p])
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("NvInferVersion.h defines no %s: not TensorRT-RTX's header", strings.Join(missing, ", "))
	}
	return strings.Join(v, "."), nil
}
