package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegistryIsConsistent: names, flavour IDs and shared objects are
// unique, a real backend says how its library is found and what its tool
// is, and the simulator has neither.
func TestRegistryIsConsistent(t *testing.T) {
	names, ids, files := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, b := range All() {
		if names[b.Name] {
			t.Errorf("backend %s twice", b.Name)
		}
		names[b.Name] = true
		if b.Simulated {
			if len(b.Flavours) > 0 || !b.BuiltIn() || b.Tool != "" || b.Target != TargetNone {
				t.Errorf("%s: a simulated backend has no flavours, library, tool or target: %+v", b.Name, b)
			}
			continue
		}
		if len(b.Flavours) == 0 || b.BuiltIn() || b.Library.Install == "" || b.Tool == "" || b.Target == TargetNone {
			t.Errorf("%s: a real backend needs flavours, a library variable, install hint, tool and target: %+v", b.Name, b)
		}
		for _, f := range b.Flavours {
			if ids[f.ID] || files[f.File] {
				t.Errorf("%s: flavour %s (%s) is not unique", b.Name, f.ID, f.File)
			}
			ids[f.ID], files[f.File] = true, true
			if got, of, ok := FlavourByID(f.ID); !ok || got.File != f.File || of.Name != b.Name {
				t.Errorf("FlavourByID(%s) = %+v of %s", f.ID, got, of.Name)
			}
		}
	}
	if _, ok := Lookup("cuda"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
	if b := Of(TensorRTRTX); b.Tool != "tensorrt_rtx" {
		t.Errorf("Of(%s).Tool = %q", TensorRTRTX, b.Tool)
	}
}

// TestFlavoursMatchTheBuild keeps the registry and the files that compile
// and load each flavour in step: backends.mk builds each shared object with
// the flavour's macro and headers, and the shim checks the macro.
func TestFlavoursMatchTheBuild(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "native", "backends", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	mk, shim := read("backends.mk"), read("shim.cc")
	for _, f := range Flavours() {
		for _, want := range []string{"$(BACKEND_LIBDIR)/" + f.File + ":", "$(call backend_compile," + f.Define + ",$(" + f.HeadersVar + "))"} {
			if !strings.Contains(mk, want) {
				t.Errorf("backends.mk lacks %q for flavour %s", want, f.ID)
			}
		}
		if !strings.Contains(shim, "defined("+f.Define+")") {
			t.Errorf("shim.cc does not check %s (flavour %s)", f.Define, f.ID)
		}
	}
}

// A library's name says whose it is: its product, then its version, as
// the worker's hello and the hook name it.
func TestOfLibrary(t *testing.T) {
	for library, want := range map[string]string{
		"TensorRT-RTX 1.7.1.116": TensorRTRTX,
		"TensorRT 10.16.1.11":    TensorRT,
		"TensorRT 11.4.0.106":    TensorRT,
		"TensorRT-LLM 0.1":       "", // another product that starts the same
		"TensorRT":               "", // no version
		"the simulator 1":        "", // no library of its own
		"":                       "",
	} {
		b, ok := OfLibrary(library)
		if ok != (want != "") || b.Name != want {
			t.Errorf("OfLibrary(%q) = %q, %v; want %q", library, b.Name, ok, want)
		}
	}
}
