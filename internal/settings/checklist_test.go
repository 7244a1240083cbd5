package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// keyFiles are the files a builder setting touches besides the table, as
// docs/architecture.md's checklist for a new setting names them: the
// generated schema and C++ decoder, the C++ code that applies it, and the
// pages that document it.
var keyFiles = []string{
	"internal/settings/table.go",
	"internal/matrix/schema.json",
	"native/backends/settings_table.h",
	"native/backends/settings_enums.h",
	"native/backends/builder_settings.h",
	"native/backends/shim.cc",
	"docs/builder-settings.md",
	"docs/matrix.md",
}

func readRepo(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestChecklistNamesEveryFile: the architecture's checklist for a new
// setting names every file this test checks the setting in.
func TestChecklistNamesEveryFile(t *testing.T) {
	arch := readRepo(t, "docs/architecture.md")
	start := strings.Index(arch, "**A builder setting.**")
	if start < 0 {
		t.Fatal("docs/architecture.md has no checklist for a builder setting (**A builder setting.**)")
	}
	checklist, _, _ := strings.Cut(arch[start:], "\n- **")
	for _, f := range keyFiles {
		if !strings.Contains(checklist, f) {
			t.Errorf("the checklist for a builder setting does not name %s", f)
		}
	}
}

// TestEverySettingIsInEveryFile: a key of the table is in the schema, is
// decoded and applied by the C++ side, and is documented; a setting added
// to the table alone fails here until every place has it.
func TestEverySettingIsInEveryFile(t *testing.T) {
	var schema struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal([]byte(readRepo(t, "internal/matrix/schema.json")), &schema); err != nil {
		t.Fatal(err)
	}
	decoder := readRepo(t, "native/backends/settings_table.h")
	apply := readRepo(t, "native/backends/builder_settings.h") + readRepo(t, "native/backends/shim.cc") +
		readRepo(t, "native/backends/settings_enums.h") // the BuilderFlag settings are applied from its bool_flags()
	docs := readRepo(t, "docs/builder-settings.md") + readRepo(t, "docs/matrix.md")
	for _, s := range All() {
		if _, ok := schema.Defs[s.Key]; !ok {
			t.Errorf("%s: schema.json has no definition of it (go generate ./internal/matrix)", s.Key)
		}
		if !strings.Contains(docs, "`"+s.Key+"`") {
			t.Errorf("%s: docs/builder-settings.md and docs/matrix.md do not document it", s.Key)
		}
		switch {
		case s.AliasOf != "", s.ItemOf != "":
			// Another way to write a part of a setting, or one item of a
			// list setting, applied as it.
		case s.Fixed:
			if !strings.Contains(apply, "req."+ident(s.Key)) {
				t.Errorf("%s: shim.cc never uses req.%s: the backends drop it", s.Key, ident(s.Key))
			}
		default:
			if !strings.Contains(decoder, `key == "`+s.Key+`"`) {
				t.Errorf("%s: settings_table.h does not decode it (go generate ./internal/settings)", s.Key)
			}
			id := ident(s.Key)
			if !strings.Contains(apply, "s."+id) && !strings.Contains(apply, "&Settings::"+id) && !strings.Contains(apply, "req."+id) {
				t.Errorf("%s: builder_settings.h and shim.cc never apply s.%s", s.Key, id)
			}
		}
	}
}

// TestSettingsPageTrtexecFlags: docs/builder-settings.md's lists of
// trtexec flags are the table's. Its "Mapped flags" are every flag a
// setting reads that trtexec 10.x has, no more; a deprecated spelling
// stands in parentheses right after the flag that replaced it; the flags
// of "Lines written for TensorRT 8.x" include every removed flag (mapped
// to its successor or a no-op); and the examples the other lists give are
// of their class.
func TestSettingsPageTrtexecFlags(t *testing.T) {
	page := readRepo(t, "docs/builder-settings.md")
	bullet := func(title string) string {
		start := strings.Index(page, "\n- **"+title)
		if start < 0 {
			t.Fatalf("docs/builder-settings.md has no bullet %q", title)
		}
		text, _, _ := strings.Cut(page[start+1:], "\n- ")
		return text
	}
	flagsIn := func(text string) []string {
		var out []string
		for _, m := range regexp.MustCompile("--([A-Za-z0-9]+)").FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	firstParens := func(text string) string {
		_, after, _ := strings.Cut(text, "(")
		inside, _, _ := strings.Cut(after, ")")
		return inside
	}

	mapped := bullet("Mapped flags:")
	var want, removed []string
	for _, name := range FlagNames() {
		info := Classify(name)
		switch {
		case info.Class == Mapped && info.Flag.Removed:
			removed = append(removed, name)
		case info.Class == Mapped:
			want = append(want, name)
			if succ := info.Flag.Successor; succ != "" {
				// `--NEW` (... `--OLD` ...), with no other flag between.
				near := regexp.MustCompile("`" + regexp.QuoteMeta(succ) + "` \\([^)`]*(`[^`-][^`]*`[^)`]*)*`--" + name + "`")
				if !near.MatchString(mapped) {
					t.Errorf("docs/builder-settings.md: --%s is not in parentheses right after %s, the flag that replaced it", name, succ)
				}
			}
		case info.Class == NoOp:
			removed = append(removed, name)
		}
	}
	got := flagsIn(mapped)
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("docs/builder-settings.md's mapped flags lack --%s, which the settings table maps", name)
		}
	}
	for _, name := range got {
		if !slices.Contains(want, name) {
			t.Errorf("docs/builder-settings.md's mapped flags list --%s, which the settings table does not map (class %s)", name, className[Classify(name).Class])
		}
	}
	old := flagsIn(bullet("Lines written for TensorRT 8.x"))
	for _, name := range removed {
		if !slices.Contains(old, name) {
			t.Errorf("docs/builder-settings.md's lines for TensorRT 8.x do not name --%s, which 10.x removed", name)
		}
	}
	for title, class := range map[string]Class{"Inference-only flags": InferenceOnly, "Build flags trt-action cannot honour": Refused} {
		for _, name := range flagsIn(firstParens(bullet(title))) {
			if got := Classify(name).Class; got != class {
				t.Errorf("docs/builder-settings.md: --%s is an example of %q, but the table's class for it is %s", name, title, className[got])
			}
		}
	}
}

var className = map[Class]string{Unknown: "unknown", Mapped: "mapped", InferenceOnly: "inference-only", NoOp: "no-op", Ignored: "ignored", Refused: "refused"}
