package settings

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/backend"
)

// TestGeneratedHeadersAreCurrent: the C++ headers are what the table and the
// backend registry make now, so the backends can never decode, allow or map
// a setting the matrix does not (run go generate ./internal/settings).
func TestGeneratedHeadersAreCurrent(t *testing.T) {
	for _, g := range Headers() {
		data, err := os.ReadFile(filepath.Join("..", "..", g.Path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, g.Content) {
			t.Errorf("%s is not what the settings table makes: run go generate ./internal/settings", g.Path)
		}
	}
}

// TestTableIsConsistent checks what the table itself must agree with.
func TestTableIsConsistent(t *testing.T) {
	keys := map[string]bool{}
	flavour := func(where string, ids []string) {
		for _, id := range ids {
			if _, _, ok := backend.FlavourByID(id); !ok {
				t.Errorf("%s: flavour %q is not in the backend registry", where, id)
			}
		}
	}
	for _, s := range All() {
		if keys[s.Key] {
			t.Errorf("key %s twice", s.Key)
		}
		keys[s.Key] = true
		flavour(s.Key, s.Flavours)
		if s.Doc == "" {
			t.Errorf("%s: no Doc", s.Key)
		}
		spellings := map[string]bool{}
		for _, v := range s.Values {
			flavour(s.Key+" "+v.Name, v.Flavours)
			// A value of an enum-typed setting stands for an enumerator, or
			// for other values (best), or asks for nothing (fp32); an Enum's
			// value may set nothing (refit: none). Anything else would be
			// accepted and apply nothing.
			if s.EnumType != "" && v.Enum == "" && s.Kind != Enum && !v.Implied && len(v.Implies) == 0 {
				t.Errorf("%s %s: a value of an enum-typed %v stands for no enumerator", s.Key, v.Name, s.Kind)
			}
			for _, part := range v.Implies {
				if p, ok := s.Value(part); !ok || p.Enum == "" || len(p.Implies) > 0 {
					t.Errorf("%s %s implies %q, which is no value with an enumerator of its own", s.Key, v.Name, part)
				}
			}
			for _, sp := range append([]string{v.trtexec()}, aliasSpellings(v)...) {
				if sp != NoFlag && spellings[sp] {
					t.Errorf("%s: trtexec spelling %q twice", s.Key, sp)
				}
				spellings[sp] = true
			}
		}
		switch d := s.Default.(type) {
		case string:
			if _, ok := s.Value(d); !ok {
				t.Errorf("%s: default %q is not a value", s.Key, d)
			}
		case int:
			if int64(d) < s.Min || int64(d) > s.Max {
				t.Errorf("%s: default %d outside %d..%d", s.Key, d, s.Min, s.Max)
			}
		}
		for _, f := range s.Trtexec {
			if f.Set != "" && s.Kind != Bool && f.Part == "" {
				if _, ok := s.Value(f.Set); !ok {
					t.Errorf("%s: --%s sets %q, which is not a value", s.Key, f.Name, f.Set)
				}
			}
		}
		if s.Kind == Int && s.Min > s.Max {
			t.Errorf("%s: range %d..%d", s.Key, s.Min, s.Max)
		}
	}
}

func aliasSpellings(v Value) []string {
	var out []string
	for _, a := range v.Aliases {
		out = append(out, a.Spelling)
	}
	return out
}

// toolFlags reads testdata/trtexec-flags: each tool version's flag names.
func toolFlags(t *testing.T) map[string][]string { return toolLists(t, "trtexec-flags", 5) }

// toolLists reads the lists in testdata/dir, at least least of them: each
// tool version's names, one a line, # comments.
func toolLists(t *testing.T, dir string, least int) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
	if err != nil || len(files) < least {
		t.Fatalf("%s lists: %v %v", dir, files, err)
	}
	out := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tool := strings.TrimSuffix(filepath.Base(f), ".txt")
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
				out[tool] = append(out[tool], line)
			}
		}
	}
	return out
}

// recorder is a Writer that keeps what a flag wrote.
type recorder struct{ wrote []string }

func (r *recorder) Set(key, value string)   { r.wrote = append(r.wrote, key+": "+value) }
func (r *recorder) Append(key, item string) { r.wrote = append(r.wrote, key+": +"+item) }
func (r *recorder) Put(key string, path []string, value string) {
	r.wrote = append(r.wrote, key+"."+strings.Join(path, ".")+": "+value)
}
func (r *recorder) Fill(key string, path []string, value string) { r.Put(key, path, value) }
func (r *recorder) Profile(index int)                            { r.wrote = append(r.wrote, "profile "+strconv.Itoa(index)) }

// TestEveryPreviewNameIsRead: every --preview name trtexec 8.6 to 10.x
// reads (testdata/trtexec-preview, from each tag's sampleOptions.cpp) turns
// a preview feature on or off, or is ignored with a warning saying why
// (one a later TensorRT dropped, or made the default); and the error for
// a name no trtexec has lists them all.
func TestEveryPreviewNameIsRead(t *testing.T) {
	preview := Classify("preview")
	all := map[string]bool{}
	for tool, names := range toolLists(t, "trtexec-preview", 3) {
		for _, name := range names {
			all[name] = true
			for _, sign := range []string{"+", "-"} {
				var w recorder
				warnings, err := preview.Read(&w, sign+name, true)
				switch {
				case err != nil:
					t.Errorf("%s: --preview=%s%s: %v", tool, sign, name, err)
				case len(w.wrote) == 0 && (len(warnings) != 1 || !strings.Contains(warnings[0], name+" ignored: ")):
					t.Errorf("%s: --preview=%s%s sets nothing and says %q", tool, sign, name, warnings)
				}
			}
		}
	}
	_, err := preview.Read(&recorder{}, "+nonesuch0000", true)
	for name := range all {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("the error for an unknown name does not list %s: %v", name, err)
		}
	}
}

// TestEveryToolFlagIsClassified checks the flag table against the flags
// each tool version has (testdata/trtexec-flags, read from NVIDIA's
// sampleOptions.cpp at each tag and from the TensorRT-RTX documentation):
// every flag a tool has is mapped, ignored as inference-only, refused with
// a reason, or a no-op or successor of a flag TensorRT 10 removed; every
// flag the table names is one some tool has; and a removed flag is one
// trtexec 8.6 had and 10.x does not.
func TestEveryToolFlagIsClassified(t *testing.T) {
	lists := toolFlags(t)
	has := func(name string, tools ...string) bool {
		for tool, flags := range lists {
			if (len(tools) == 0 || slices.Contains(tools, tool)) && slices.Contains(flags, name) {
				return true
			}
		}
		return false
	}
	current := []string{"trtexec-10.0.1", "trtexec-10.16", "trtexec-11.1", "tensorrt_rtx"}
	for tool, flags := range lists {
		for _, name := range flags {
			if Classify(name).Class == Unknown {
				t.Errorf("%s: --%s is not classified: map it, or list it as inference-only, refused or removed", tool, name)
			}
		}
	}
	for _, name := range FlagNames() {
		info := Classify(name)
		switch {
		case !has(name):
			t.Errorf("--%s is in the flag table, but no tool list has it", name)
		case info.Class == NoOp || info.Flag.Removed:
			if !has(name, "trtexec-8.6.1") || has(name, current...) {
				t.Errorf("--%s is classified as removed in TensorRT 10, but the lists disagree", name)
			}
		case info.Class == Mapped && !has(name, current...):
			t.Errorf("--%s is mapped as a current flag, but only trtexec 8.6 has it: mark it Removed", name)
		}
	}
	// A flag trtexec 8.6 had and 10.x dropped is read, with a warning, or
	// refused with a reason: never unknown.
	for _, name := range lists["trtexec-8.6.1"] {
		if !has(name, current...) {
			if c := Classify(name); c.Class != NoOp && c.Class != Refused && !c.Flag.Removed {
				t.Errorf("--%s: trtexec 10 removed it; classify it as a no-op, a successor or refused", name)
			}
		}
	}
}

// TestShapesLineNamesEachProblemOnce: an input name plan --trtexec cannot
// write, or writes for trt-action alone, is said once, not once per bound.
func TestShapesLineNamesEachProblemOnce(t *testing.T) {
	s, _ := Lookup("shapes")
	dims := Shape{Min: []int64{1}, Opt: []int64{2}, Max: []int64{3}}
	l := s.WriteTrtexec(map[string]Shape{"a,b": dims, "c'd": dims, "e": dims, "f,g": dims, "h'i": dims})
	if len(l.Missing) != 2 || len(l.Notes) != 2 || len(l.Flags) != 3 || !strings.Contains(l.Flags[0], "'a,b':1,e:1,'f,g':1") {
		t.Errorf("flags %q, missing %q, notes %q", l.Flags, l.Missing, l.Notes)
	}
}

// TestPoolsLineWritesTrtexecUnits: plan --trtexec writes each pool's size
// exactly in the units trtexec reads (G, M, K, else bytes), in table order.
func TestPoolsLineWritesTrtexecUnits(t *testing.T) {
	s, _ := Lookup("memory-pools")
	l := s.WriteTrtexec(map[string]int64{"workspace": 3 << 30, "tactic-shared": 48 << 10, "dla-sram": 1536 << 20, "dla-local": 1000})
	want := []string{"--memPoolSize=workspace:3G,tacticSharedMem:48K,dlaSRAM:1536M,dlaLocalDRAM:1000B"}
	if !slices.Equal(l.Flags, want) || len(l.Missing) != 0 {
		t.Errorf("flags %q, missing %q; want flags %q", l.Flags, l.Missing, want)
	}
}
