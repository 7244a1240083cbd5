// Command mkwheel builds the trt-action wheel of one platform from the
// folder scripts/dist stages for it (the binary and lib/*.so), the Python
// sources in the repository, its LICENSE and the wheel's page on PyPI
// (docs/pypi.md), with `python -m wheel pack`,
// and prints the wheel's path:
//
//	go run ./internal/wheel/mkwheel -stage DIR -version VERSION -out DIR
//
// The same inputs make the same bytes: fixed file modes, and zip times
// from SOURCE_DATE_EPOCH (the last commit's time unless -epoch says).
// `mkwheel -pep440 VERSION` only prints VERSION's PEP 440 form (make dist
// checks it before building anything); `mkwheel -license` only prints the
// project's SPDX licence expression (make dist writes it into the SBOMs);
// `mkwheel -check DIR` only checks a stage folder (or an unpacked tarball's)
// against the release floor, printing what each ELF file needs
// (wheel.CheckRelease: make dist and scripts/smoke-dist run it).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/trt-action/trt-action/internal/wheel"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// options are mkwheel's flags.
type options struct {
	stage, out, version, rtxInclude, repo, pyWheel, ref, python string
	epoch                                                       int64
	pep440, check                                               string
	license                                                     bool
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fl := flag.NewFlagSet("mkwheel", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprint(stderr, "usage: mkwheel -stage DIR -version VERSION -out DIR [flags]\n"+
			"       mkwheel -pep440 VERSION\n"+
			"       mkwheel -license\n"+
			"       mkwheel -check DIR\n"+
			"Builds the trt-action wheel of one platform from its dist stage folder and prints its path.\n")
		fl.PrintDefaults()
	}
	fl.StringVar(&o.stage, "stage", "", "one platform's dist stage folder: the trt-action binary and lib/*.so (required)")
	fl.StringVar(&o.out, "out", "", "the folder the wheel goes into; a wheel of the same name there is replaced (required)")
	fl.StringVar(&o.version, "version", "", "make's VERSION (v1.2.3, git describe output, or PEP 440), written as PEP 440 (required)")
	fl.StringVar(&o.rtxInclude, "rtx-include", os.Getenv("TRT_RTX_INCLUDE"), "TensorRT-RTX's include folder the rtx backend is compiled against: its NvInferVersion.h pins the rtx extra")
	fl.StringVar(&o.repo, "repo", ".", "the repository: LICENSE, docs/pypi.md, internal/pyhook/wheel and internal/pyhook/py/trt_action_hook")
	fl.StringVar(&o.pyWheel, "pywheel", "", "the Python files copied whole into the wheel's root (default: REPO/internal/pyhook/wheel)")
	fl.StringVar(&o.ref, "ref", "", "the git tag or commit the description's relative links and the Source URL point into (default: the tag at HEAD, else HEAD's commit)")
	fl.Int64Var(&o.epoch, "epoch", 0, "SOURCE_DATE_EPOCH, the time of every file in the wheel (default: the last commit's time)")
	fl.StringVar(&o.python, "python", pythonDefault(), "the Python with the pinned wheel package (scripts/setup-dist-tools; default $TRT_ACTION_DIST_PYTHON, else python3)")
	fl.StringVar(&o.pep440, "pep440", "", "only print this VERSION's PEP 440 form, or say why it has none")
	fl.BoolVar(&o.license, "license", false, "only print the project's licence as an SPDX expression")
	fl.StringVar(&o.check, "check", "", "only check that the binary and lib/*.so in this folder need at most the release floor ("+wheel.FloorText+"), printing what each needs")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.license {
		fmt.Fprintln(stdout, wheel.License)
		return 0
	}
	if o.check != "" {
		return check(o.check, stdout, stderr)
	}
	if o.pep440 != "" {
		v, err := wheel.Version(o.pep440)
		if err != nil {
			fmt.Fprintln(stderr, "mkwheel:", err)
			return 2
		}
		fmt.Fprintln(stdout, v)
		return 0
	}
	var missing []string
	for _, f := range []struct{ name, value string }{{"-stage", o.stage}, {"-out", o.out}, {"-version", o.version}, {"-rtx-include", o.rtxInclude}} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "mkwheel: missing %s (mkwheel -h says what each is)\n", strings.Join(missing, ", "))
		return 2
	}
	path, err := build(o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mkwheel:", err)
		return 1
	}
	fmt.Fprintln(stdout, path)
	return 0
}

// check prints what each ELF file of the folder dir needs, one line each,
// and fails when one needs more than the release floor.
func check(dir string, stdout, stderr io.Writer) int {
	files, err := wheel.ReadStage(dir)
	if err != nil {
		fmt.Fprintln(stderr, "mkwheel:", err)
		return 1
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "%s/%s: %s\n", dir, f.File, f.Summary())
	}
	if err := wheel.CheckRelease(files); err != nil {
		fmt.Fprintf(stderr, "mkwheel: %s: %v\n", dir, err)
		return 1
	}
	tag, _ := wheel.Tag(files) // CheckRelease computed it without an error
	fmt.Fprintf(stdout, "%s: within the release floor (%s); a wheel of them is %s\n", dir, wheel.FloorText, tag)
	return 0
}

func pythonDefault() string {
	if p := os.Getenv("TRT_ACTION_DIST_PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// build lays out the wheel's tree in a temporary folder, packs it, and
// moves the finished wheel into o.out.
func build(o options, log io.Writer) (string, error) {
	version, err := wheel.Version(o.version)
	if err != nil {
		return "", err
	}
	header, err := os.ReadFile(filepath.Join(o.rtxInclude, "NvInferVersion.h"))
	if err != nil {
		return "", fmt.Errorf("the rtx extra's pin: %w", err)
	}
	rtx, err := wheel.RTXVersion(string(header))
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(o.rtxInclude, "NvInferVersion.h"), err)
	}
	description, err := os.ReadFile(filepath.Join(o.repo, filepath.FromSlash(wheel.Description)))
	if err != nil {
		return "", err
	}
	if o.ref == "" {
		if o.ref, err = gitRef(o.repo); err != nil {
			return "", err
		}
	}
	if o.epoch == 0 {
		if o.epoch, err = gitEpoch(o.repo); err != nil {
			return "", err
		}
	}

	if o.pyWheel == "" {
		o.pyWheel = filepath.Join(o.repo, "internal", "pyhook", "wheel")
	}
	work, err := os.MkdirTemp("", "mkwheel-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	treeDir := filepath.Join(work, "tree")
	if err := os.Mkdir(treeDir, 0o755); err != nil {
		return "", err
	}
	src := wheel.Sources{
		Stage:   o.stage,
		Python:  o.pyWheel,
		Hook:    filepath.Join(o.repo, "internal", "pyhook", "py", "trt_action_hook"),
		License: filepath.Join(o.repo, wheel.LicenseFile),
	}
	meta := wheel.Metadata{Version: version, RTXVersion: rtx, Description: string(description), Ref: o.ref}
	if _, err := wheel.Layout(treeDir, src, meta); err != nil {
		return "", err
	}
	return pack(o, treeDir, log)
}

// pack runs `wheel pack` into a temporary folder inside o.out, then renames
// the wheel into o.out: a wheel of the same name there is replaced only by
// a complete new one.
func pack(o options, treeDir string, log io.Writer) (string, error) {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return "", err
	}
	packDir, err := os.MkdirTemp(o.out, ".mkwheel-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(packDir)
	cmd := exec.Command(o.python, "-m", "wheel", "pack", "--dest-dir", packDir, treeDir)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.FormatInt(o.epoch, 10))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s -m wheel pack: %w\n%s", o.python, err, out.String())
	}
	made, err := filepath.Glob(filepath.Join(packDir, "*.whl"))
	if err != nil || len(made) != 1 {
		return "", fmt.Errorf("wheel pack made %d wheels, want 1:\n%s", len(made), out.String())
	}
	dest := filepath.Join(o.out, filepath.Base(made[0]))
	if err := os.Rename(made[0], dest); err != nil {
		return "", err
	}
	return dest, nil
}

// gitRef is the tag at HEAD, else HEAD's commit: where the description's
// links point, so they show the docs of the release they came with.
func gitRef(repo string) (string, error) {
	if tag, err := git(repo, "describe", "--tags", "--exact-match", "HEAD"); err == nil {
		return tag, nil
	}
	return git(repo, "rev-parse", "HEAD")
}

// gitEpoch is the last commit's time, as scripts/dist dates the tarballs.
func gitEpoch(repo string) (int64, error) {
	s, err := git(repo, "log", "-1", "--format=%ct")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

func git(repo string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
