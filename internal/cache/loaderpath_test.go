package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeLibs writes stand-in library files into dir, each with its own
// content, so an identity (their SHA-256) says which file was taken.
func writeLibs(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(dir+"/"+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func identityOf(t *testing.T, path string) string {
	t.Helper()
	id, err := fileIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Base(path) + " " + id
}

// With neither --trt-lib nor the variable, the key names the file the
// loader would load: LD_LIBRARY_PATH before ld.so.cache before the default
// folders, and the parser beside the library before the search path.
func TestLibraryIdentityOnTheLoaderSearchPath(t *testing.T) {
	t.Setenv("TRT_ACTION_TRT_LIB", "")
	ldPath, cached, defaults, parsers := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeLibs(t, ldPath, "libnvinfer.so.10", "libnvonnxparser.so.10")
	writeLibs(t, cached, "libnvinfer.so.10", "libnvonnxparser.so.10", "libnvinfer.so.11")
	writeLibs(t, defaults, "libnvinfer.so.10", "libnvonnxparser.so.10", "libnvinfer.so.11", "libnvonnxparser.so.11")
	writeLibs(t, parsers, "libnvonnxparser.so.11")
	cache := map[string]string{
		"libnvinfer.so.10":      filepath.Join(cached, "libnvinfer.so.10"),
		"libnvonnxparser.so.10": filepath.Join(cached, "libnvonnxparser.so.10"),
		"libnvinfer.so.11":      filepath.Join(cached, "libnvinfer.so.11"),
	}
	s := loaderSearch{
		libraryPath: "/nonexistent:" + ldPath + ":" + parsers,
		cache:       func() map[string]string { return cache },
		defaults:    []string{defaults},
	}
	useLoader(t, s)
	got, err := libraryIdentity("tensorrt", "")
	if err != nil {
		t.Fatal(err)
	}
	// 11 from the cache (LD_LIBRARY_PATH has none), its parser from
	// LD_LIBRARY_PATH (none beside it); 10 and its parser from
	// LD_LIBRARY_PATH, ahead of the cache and the defaults.
	want := strings.Join([]string{
		identityOf(t, filepath.Join(cached, "libnvinfer.so.11")), identityOf(t, filepath.Join(parsers, "libnvonnxparser.so.11")),
		identityOf(t, filepath.Join(ldPath, "libnvinfer.so.10")), identityOf(t, filepath.Join(ldPath, "libnvonnxparser.so.10")),
	}, "; ")
	if got != want {
		t.Errorf("identity\n %s\nwant\n %s", got, want)
	}

	// Only the default folders: found there.
	useLoader(t, loaderSearch{defaults: []string{t.TempDir(), defaults}})
	got, err = libraryIdentity("tensorrt", "")
	if err != nil || !strings.Contains(got, identityOf(t, filepath.Join(defaults, "libnvinfer.so.10"))) {
		t.Errorf("from the default folders: %q, %v", got, err)
	}

	// A library whose parser is nowhere cannot be named.
	lonely := t.TempDir()
	writeLibs(t, lonely, "libnvinfer.so.10")
	useLoader(t, loaderSearch{libraryPath: lonely})
	if _, err := libraryIdentity("tensorrt", ""); !isLibraryUnknown(err) || !strings.Contains(err.Error(), "libnvonnxparser.so.10") {
		t.Errorf("no parser anywhere: %v", err)
	}
}

// The real TensorRT-RTX library found through LD_LIBRARY_PATH has the
// identity it has when named by its folder.
func TestLibraryIdentityOfRTXOnLDLibraryPath(t *testing.T) {
	dir := rtxLibDir(t)
	t.Setenv("TRT_ACTION_RTX_LIB", "")
	named, err := libraryIdentity("tensorrt-rtx", dir)
	if err != nil {
		t.Fatal(err)
	}
	useLoader(t, loaderSearch{libraryPath: dir})
	found, err := libraryIdentity("tensorrt-rtx", "")
	if err != nil || found != named {
		t.Errorf("on LD_LIBRARY_PATH: %q, %v; named by its folder: %q", found, err, named)
	}
}

func TestParseLdconfig(t *testing.T) {
	out := []byte(`4 libs found in cache ` + "`/etc/ld.so.cache'" + `
	libnvinfer.so.10 (libc6) => /usr/lib/i386-linux-gnu/libnvinfer.so.10
	libnvinfer.so.10 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvinfer.so.10
	libnvinfer.so.10 (libc6,x86-64) => /opt/other/libnvinfer.so.10
	libnvonnxparser.so.10 (libc6,AArch64) => /usr/lib/aarch64-linux-gnu/libnvonnxparser.so.10
	libz.so.1 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libz.so.1
`)
	amd := parseLdconfig(out, "x86-64")
	if amd["libnvinfer.so.10"] != "/usr/lib/x86_64-linux-gnu/libnvinfer.so.10" || amd["libz.so.1"] != "/lib/x86_64-linux-gnu/libz.so.1" {
		t.Errorf("x86-64: %v", amd)
	}
	if _, ok := amd["libnvonnxparser.so.10"]; ok {
		t.Errorf("x86-64 took an AArch64 library: %v", amd)
	}
	arm := parseLdconfig(out, "AArch64")
	if len(arm) != 1 || arm["libnvonnxparser.so.10"] != "/usr/lib/aarch64-linux-gnu/libnvonnxparser.so.10" {
		t.Errorf("AArch64: %v", arm)
	}
	if len(parseLdconfig(out, "")) != 0 {
		t.Error("an unknown architecture took libraries")
	}
}

// The machine's own loader cache reads: libc is in every ld.so.cache.
func TestLdconfigCacheOfThisMachine(t *testing.T) {
	if p := ldconfigCache()["libc.so.6"]; !isFile(p) {
		t.Errorf("libc.so.6 from ldconfig -p: %q", p)
	}
}
