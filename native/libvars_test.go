package native

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/install"
)

// One way to find the TensorRT libraries: the variable the set-up script
// exports is the one the backends read, and the backends' fix-it hints and
// docs/backends.md name the same variables (a new shell that only has the
// script's exports must find TensorRT-RTX).
func TestLibraryVariablesNamedAlikeInScriptBackendsAndReadme(t *testing.T) {
	shim := readText(t, "backends/backend_table.h") // the shim's constants, generated from internal/backend
	script := readText(t, "../scripts/setup-tensorrt-rtx")
	readme := readText(t, "../docs/backends.md")

	read := regexp.MustCompile(`kBackend\[\] = "([a-z-]+)";[^#]*kLibEnv\[\] = "([A-Z_]+)"`).FindAllStringSubmatch(shim, -1)
	vars := map[string]string{}
	for _, r := range read {
		vars[r[1]] = r[2]
	}
	if len(read) != 3 || len(vars) != 2 || vars["tensorrt-rtx"] != "TRT_ACTION_RTX_LIB" || vars["tensorrt"] != "TRT_ACTION_TRT_LIB" {
		t.Fatalf("the shim reads %v; want TRT_ACTION_RTX_LIB (tensorrt-rtx) and TRT_ACTION_TRT_LIB (tensorrt, both majors)", read)
	}
	exported := regexp.MustCompile(`export ([A-Z_]+_LIB)=`).FindAllStringSubmatch(script, -1)
	if len(exported) != 1 || exported[0][1] != "TRT_ACTION_RTX_LIB" {
		t.Errorf("setup-tensorrt-rtx exports %v; want exactly TRT_ACTION_RTX_LIB, the variable the backend reads", exported)
	}
	// The hint a backend's message ends with (internal/backend's
	// InstallHint, told to the backend as lib_fix) names the variable, however
	// trt-action was installed.
	for _, b := range backend.All() {
		if b.Library.Variable == "" {
			continue
		}
		for _, kind := range []install.Kind{install.Alone, install.Source, install.Tarball, install.Prefix, install.Wheel, install.WheelTarget} {
			if h := b.InstallHint(install.Installation{Kind: kind, Root: "/x"}); !strings.Contains(h, b.Library.Variable) {
				t.Errorf("%s installed %v: the install hint %q does not name its variable %s", b.Name, kind, h, b.Library.Variable)
			}
		}
	}
	for _, want := range []string{"TRT_ACTION_RTX_LIB", "TRT_ACTION_TRT_LIB", "TRT_ACTION_BACKEND_DIR"} {
		if !strings.Contains(readme, want) {
			t.Errorf("docs/backends.md does not mention %s", want)
		}
	}
	if strings.Contains(script+shim+readme, "TRT_RTX_LIB=") {
		t.Error("the old name TRT_RTX_LIB is still exported or documented somewhere")
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
