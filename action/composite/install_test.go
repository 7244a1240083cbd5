// Package composite holds the composite action; its Go is only this test of
// the install script against a fake release server on 127.0.0.1.
package composite

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const version = "v9.8.7"

// fakeRelease serves URL/VERSION/FILE like GitHub's release downloads and
// counts the requests per path.
type fakeRelease struct {
	mu    sync.Mutex
	files map[string][]byte // "v9.8.7/checksums.txt" -> content
	hits  map[string]int
}

func (f *fakeRelease) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := strings.TrimPrefix(r.URL.Path, "/")
	f.hits[p]++
	body, ok := f.files[p]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(body)
}

func (f *fakeRelease) count(p string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[p]
}

// tarball is a release tarball whose "binary" is a script printing its
// architecture and arguments.
func tarball(t *testing.T, arch string) (name string, data []byte) {
	t.Helper()
	stem := fmt.Sprintf("trt-action_%s_linux_%s", version, arch)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name string, mode int64, body string) {
		hdr := &tar.Header{Name: name, Mode: mode, Size: int64(len(body)), Typeflag: tar.TypeReg}
		if strings.HasSuffix(name, "/") {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	add(stem+"/", 0o755, "")
	add(stem+"/trt-action", 0o755, "#!/bin/sh\necho \"fake trt-action "+arch+" $*\"\n")
	add(stem+"/lib/", 0o755, "")
	add(stem+"/lib/libtam_trt10.so", 0o644, "not really ELF")
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return stem + ".tar.gz", buf.Bytes()
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// newRelease publishes version with both tarballs; tamper corrupts the
// arm64 tarball after its checksum was taken.
func newRelease(t *testing.T, tamper bool) (*fakeRelease, *httptest.Server) {
	t.Helper()
	f := &fakeRelease{files: map[string][]byte{}, hits: map[string]int{}}
	var sums strings.Builder
	for _, arch := range []string{"amd64", "arm64"} {
		name, data := tarball(t, arch)
		fmt.Fprintf(&sums, "%s  %s\n", sum(data), name)
		if tamper && arch == "arm64" {
			data = append([]byte(nil), data...)
			data[len(data)/2] ^= 0xff
		}
		f.files[version+"/"+name] = data
	}
	f.files[version+"/checksums.txt"] = []byte(sums.String())
	srv := httptest.NewServer(f) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return f, srv
}

type result struct {
	stdout, stderr string
	code           int
}

// install runs the script as the composite action's step would.
func install(t *testing.T, env ...string) result {
	t.Helper()
	cmd := exec.Command("bash", "install")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "RUNNER_OS=Linux"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{strings.TrimSpace(out.String()), errb.String(), code}
}

func runBinary(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(path, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("running %s: %v\n%s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestInstallsTheTarballOfTheRunnersArchitecture(t *testing.T) {
	_, srv := newRelease(t, false)
	cache := t.TempDir()
	for arch, runnerArch := range map[string]string{"amd64": "X64", "arm64": "ARM64"} {
		r := install(t, "RUNNER_ARCH="+runnerArch, "RUNNER_TOOL_CACHE="+cache, "TRT_RELEASE_URL="+srv.URL, "TRT_VERSION="+version)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", arch, r.code, r.stderr)
		}
		if !strings.HasPrefix(r.stdout, filepath.Join(cache, "trt-action", "trt-action_"+version+"_linux_"+arch+"-")) {
			t.Errorf("%s: installed at %q, want a folder of the %s tarball in the tool cache", arch, r.stdout, arch)
		}
		if got := runBinary(t, r.stdout); got != "fake trt-action "+arch+" version" {
			t.Errorf("%s: the installed binary says %q", arch, got)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(r.stdout), "lib", "libtam_trt10.so")); err != nil {
			t.Errorf("%s: lib/ is not beside the binary: %v", arch, err)
		}
	}
}

func TestSecondRunUsesTheToolCache(t *testing.T) {
	f, srv := newRelease(t, false)
	env := []string{"RUNNER_ARCH=X64", "RUNNER_TOOL_CACHE=" + t.TempDir(), "TRT_RELEASE_URL=" + srv.URL, "TRT_VERSION=" + version}
	first := install(t, env...)
	second := install(t, env...)
	if first.code != 0 || second.code != 0 {
		t.Fatalf("exits %d, %d\n%s\n%s", first.code, second.code, first.stderr, second.stderr)
	}
	name, _ := tarball(t, "amd64")
	if n := f.count(version + "/" + name); n != 1 {
		t.Errorf("the tarball was downloaded %d times, want once", n)
	}
	if first.stdout != second.stdout || !strings.Contains(second.stderr, "(cached;") {
		t.Errorf("second run: %q (%s), want the cached %q", second.stdout, second.stderr, first.stdout)
	}
}

func TestBadChecksumIsRefusedAndNothingIsCached(t *testing.T) {
	_, srv := newRelease(t, true)
	cache := t.TempDir()
	r := install(t, "RUNNER_ARCH=ARM64", "RUNNER_TOOL_CACHE="+cache, "TRT_RELEASE_URL="+srv.URL, "TRT_VERSION="+version)
	if r.code == 0 || r.stdout != "" {
		t.Fatalf("a tampered tarball was accepted: exit %d, printed %q", r.code, r.stdout)
	}
	for _, want := range []string{"SHA-256 mismatch for trt-action_" + version + "_linux_arm64.tar.gz", "checksums.txt says ", "refusing it"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q\nwant it to contain %q", r.stderr, want)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(cache, "trt-action"))
	if len(entries) != 0 {
		t.Errorf("the tool cache keeps %v after a refused download", entries)
	}
}

// A tarball damaged before its checksum was taken (cut short on upload)
// passes the checksum; unpacking it then fails with a message that says
// what happened and what to do, not tar's bare "Unexpected EOF".
func TestATruncatedTarballWithAMatchingChecksumSaysTheReleaseIsDamaged(t *testing.T) {
	f, srv := newRelease(t, false)
	name, data := tarball(t, "arm64")
	cut := data[:len(data)/2]
	f.mu.Lock() // the server's handlers read the files
	f.files[version+"/"+name] = cut
	f.files[version+"/checksums.txt"] = []byte(sum(cut) + "  " + name + "\n")
	f.mu.Unlock()
	cache := t.TempDir()
	r := install(t, "RUNNER_ARCH=ARM64", "RUNNER_TOOL_CACHE="+cache, "TRT_RELEASE_URL="+srv.URL, "TRT_VERSION="+version)
	if r.code == 0 || r.stdout != "" {
		t.Fatalf("a truncated tarball was installed: exit %d, printed %q", r.code, r.stdout)
	}
	for _, want := range []string{
		name + " matches its SHA-256 in checksums.txt but cannot be unpacked (",
		"the release itself is damaged, so downloading it again will not help",
		"Install another release (the version input)", "report the damaged release to trt-action/trt-action",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q\nwant it to contain %q", r.stderr, want)
		}
	}
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); !strings.HasPrefix(lines[len(lines)-1], "trt-action install: error: ") {
		t.Errorf("the last line is not the script's own error: %q", lines[len(lines)-1])
	}
	entries, _ := os.ReadDir(filepath.Join(cache, "trt-action"))
	if len(entries) != 0 {
		t.Errorf("the tool cache keeps %v after a failed install", entries)
	}
}

func TestMissingReleaseIsAClearError(t *testing.T) {
	_, srv := newRelease(t, false)
	r := install(t, "RUNNER_ARCH=X64", "RUNNER_TOOL_CACHE="+t.TempDir(), "TRT_RELEASE_URL="+srv.URL, "TRT_VERSION=v0.0.404")
	want := "no trt-action release 'v0.0.404' at " + srv.URL + " (" + srv.URL + "/v0.0.404/checksums.txt: HTTP 404)"
	if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "Set the version input") {
		t.Fatalf("exit %d, stderr %q\nwant a failure containing %q and what to set", r.code, r.stderr, want)
	}
}

func TestReleaseIsTheActionsOwnRef(t *testing.T) {
	_, srv := newRelease(t, false)
	base := []string{"RUNNER_ARCH=X64", "RUNNER_TOOL_CACHE=" + t.TempDir(), "TRT_RELEASE_URL=" + srv.URL}

	// github.action_ref, when the runner fills it in.
	if r := install(t, append(base, "TRT_ACTION_REF="+version)...); r.code != 0 {
		t.Errorf("from TRT_ACTION_REF: exit %d\n%s", r.code, r.stderr)
	}
	// Else the ref in the action's folder.
	path := "/home/runner/work/_actions/trt-action/trt-action/" + version + "/action/composite"
	if r := install(t, append(base, "TRT_ACTION_PATH="+path)...); r.code != 0 {
		t.Errorf("from the action's path: exit %d\n%s", r.code, r.stderr)
	}
	// A local `uses: ./action/composite` has no ref: say what to set.
	r := install(t, append(base, "TRT_ACTION_PATH=/home/runner/work/repo/repo/action/composite")...)
	if r.code == 0 || !strings.Contains(r.stderr, "cannot tell which release to install") {
		t.Errorf("without a ref: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestUnsupportedRunners(t *testing.T) {
	cases := map[string][]string{
		"Linux only":                {"RUNNER_OS=macOS", "RUNNER_ARCH=ARM64"},
		"runner architecture 'X86'": {"RUNNER_ARCH=X86"},
	}
	for want, env := range cases {
		r := install(t, append([]string{"TRT_VERSION=" + version, "RUNNER_TOOL_CACHE=" + t.TempDir()}, env...)...)
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", env, r.code, r.stderr, want)
		}
	}
}
