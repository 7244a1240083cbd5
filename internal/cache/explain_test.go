package cache

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
)

// --explain reads the key's own document back: every part that went into
// the key, named as the key holds it, the files content hashes are of,
// and the very key Key gives.
func TestExplainGolden(t *testing.T) {
	dir := project(t)
	h := NewHasher()
	b := parseBuild(t, dir, rtxBuild)
	key, parts, err := h.Explain(context.Background(), b, keyEnv)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := NewHasher().Key(context.Background(), b, keyEnv); key != want {
		t.Errorf("Explain's key %s, Key's %s", key, want)
	}
	got := ExplainText([]ExplainedKey{{Build: b.Name, Key: key, Parts: parts}})
	golden.Check(t, "explain.golden", strings.ReplaceAll(got, dir+string(filepath.Separator), "DIR/"))
	var names []string
	for _, p := range parts {
		names = append(names, p.Name)
	}
	for _, want := range []string{"format", "backend", "library", "model.sha256", "model.external.weights.bin", "settings.plugins", "settings.targets", "settings.memory-pools.workspace"} {
		if !slices.Contains(names, want) {
			t.Errorf("no part %s among %v", want, names)
		}
	}
	if i := slices.Index(names, "model.sha256"); i < 0 || parts[i].File != b.ONNX {
		t.Errorf("the model's part does not name the model file: %+v", parts)
	}
}

// Two runners' keys differ in the part that differs: a library build-id
// shows as the one line that changed.
func TestExplainShowsTheDifference(t *testing.T) {
	dir := project(t)
	b := parseBuild(t, dir, rtxBuild)
	other := keyEnv
	other.Library = strings.Replace(other.Library, "gnu-build-id 00", "gnu-build-id ff", 1)
	explain := func(env Env) []string {
		key, parts, err := NewHasher().Explain(context.Background(), b, env)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(ExplainText([]ExplainedKey{{Build: b.Name, Key: key, Parts: parts}}), "\n")
	}
	here, there := explain(keyEnv), explain(other)
	var differ []string
	for i := range here {
		if here[i] != there[i] {
			differ = append(differ, strings.Fields(here[i])[0])
		}
	}
	if !slices.Equal(differ, []string{"mlp", "library"}) {
		t.Errorf("lines that differ begin %v, want the key's and the library's", differ)
	}
}
