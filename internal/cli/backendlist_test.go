package cli

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/trt-action/trt-action/internal/backend"
)

// TestBackendListsAreTheRegistrys: where the backends are listed for a
// user (build --backend's help, both actions' backend input), the list is
// the registry's, every name in its order: a backend added to or renamed
// in internal/backend fails here until each says so.
func TestBackendListsAreTheRegistrys(t *testing.T) {
	want := "(" + strings.Join(backend.Names(), ", ") + ")"

	c, out, errb := userCommand("")
	if code := c.Main([]string{"build", "-h"}); code != ExitOK {
		t.Fatalf("build -h: exit %d", code)
	}
	lines := strings.Split(out.String()+errb.String(), "\n")
	help := ""
	for i, line := range lines[:len(lines)-1] {
		if strings.HasPrefix(strings.TrimSpace(line), "--backend ") {
			help = strings.TrimSpace(lines[i+1])
		}
	}
	if !strings.Contains(help, want) {
		t.Errorf("build --backend's help is %q, want it to list %s", help, want)
	}

	for _, file := range []string{"../../action.yml", "../../action/composite/action.yml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var action struct {
			Inputs map[string]struct {
				Description string `yaml:"description"`
			} `yaml:"inputs"`
		}
		if err := yaml.Unmarshal(data, &action); err != nil {
			t.Fatal(err)
		}
		in, ok := action.Inputs["backend"]
		if !ok {
			t.Errorf("%s has no backend input", file)
			continue
		}
		if !strings.Contains(in.Description, want) {
			t.Errorf("%s: the backend input's description %q does not list %s", file, in.Description, want)
		}
	}
}
