package matrix

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/pyhook"
	"github.com/trt-action/trt-action/internal/settings"
)

// TestSchemaMatchesParser keeps schema.json and the parser's key lists equal
// in both directions, so editors never suggest a key the parser rejects or
// flag one it accepts.
func TestSchemaMatchesParser(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(Schema, &schema); err != nil {
		t.Fatalf("schema.json is not JSON: %v", err)
	}
	if schema["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", schema["$schema"])
	}
	pools, _ := settings.Lookup("memory-pools")
	dla, _ := settings.Lookup("dla")
	var dlaKeys []string
	for _, f := range dla.Fields {
		dlaKeys = append(dlaKeys, f.Key)
	}
	tests := []struct {
		path   []string
		parser []string
	}{
		{[]string{"properties"}, topKeys},
		{[]string{"$defs", "build", "properties"}, buildKeys},
		{[]string{"$defs", "defaults", "properties"}, defaultsKeys},
		{[]string{"$defs", "budgets", "properties"}, budgetKeys},
		{[]string{"$defs", "sim", "properties"}, simKeys},
		{[]string{"$defs", "regression", "properties"}, regressionKeys},
		{[]string{"$defs", "cache", "properties"}, cacheKeys},
		{[]string{"$defs", "shape", "properties"}, shapeKeys},
		{[]string{"$defs", "matrix", "properties"}, []string{"include", "exclude"}}, // besides axis names
		{[]string{"$defs", "memory-pools", "properties"}, pools.ValueNames()},
		{[]string{"$defs", "dla", "properties"}, dlaKeys},
	}
	for _, tt := range tests {
		got := sortedKeys(t, lookup(t, schema, tt.path...))
		want := slices.Sorted(slices.Values(tt.parser))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("schema %v = %v, parser allows %v", tt.path, got, want)
		}
	}
	enums := []struct {
		path   []string
		parser []string
	}{
		{[]string{"$defs", "backend", "enum"}, backend.Names()},
		{[]string{"$defs", "build", "then", "propertyNames", "enum"}, scriptKeys},
		{[]string{"$defs", "build", "then", "properties", "backend", "enum"}, scriptBackends()},
		{[]string{"$defs", "env", "propertyNames", "not", "enum"}, pyhook.HookEnv},
	}
	// Every setting with values lists exactly the table's (toggles each
	// also with a sign).
	for _, s := range settings.All() {
		switch s.Kind {
		case settings.Enum, settings.Set, settings.LayerTypes:
			enums = append(enums, struct {
				path   []string
				parser []string
			}{[]string{"$defs", s.Key + "-value", "enum"}, s.ValueNames()})
		case settings.Toggles:
			var signed []string
			for _, v := range s.ValueNames() {
				signed = append(signed, v, "+"+v, "-"+v)
			}
			enums = append(enums, struct {
				path   []string
				parser []string
			}{[]string{"$defs", s.Key, "anyOf", "1", "items", "anyOf", "0", "enum"}, signed})
		}
	}
	for _, tt := range enums {
		var got []string
		for _, v := range lookup(t, schema, tt.path...).([]any) {
			got = append(got, v.(string))
		}
		if !reflect.DeepEqual(got, tt.parser) {
			t.Errorf("schema %v = %v, parser allows %v", tt.path, got, tt.parser)
		}
	}
	// The one value env: may give the route variable.
	if got := lookup(t, schema, "$defs", "env", "properties", pyhook.EnvRoute, "const"); got != pyhook.RoutePython {
		t.Errorf("schema's %s = %v, parser allows %s", pyhook.EnvRoute, got, pyhook.RoutePython)
	}
}

// TestSchemaRefusesBothForms: as the parser, the schema refuses a build or
// defaults that writes a list setting and its one-item key both (shapes
// and profiles).
func TestSchemaRefusesBothForms(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(Schema, &schema); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range settings.All() {
		if row.ItemOf == "" {
			continue
		}
		n++
		want := map[string]any{"not": map[string]any{"required": []any{row.Key, row.ItemOf}}}
		for _, def := range []string{"build", "defaults"} {
			all, _ := lookup(t, schema, "$defs", def).(map[string]any)["allOf"].([]any)
			if !slices.ContainsFunc(all, func(v any) bool { return reflect.DeepEqual(v, any(want)) }) {
				t.Errorf("schema $defs.%s.allOf %v does not refuse %s with %s", def, all, row.Key, row.ItemOf)
			}
		}
	}
	if n == 0 {
		t.Error("no setting is one item of another: shapes is profiles'")
	}
}

// TestSchemaIsGenerated: schema.json is what go generate ./internal/matrix
// writes from schema.base.json and the settings table, so a setting added
// to the table, or an edit of the base, cannot be forgotten there.
func TestSchemaIsGenerated(t *testing.T) {
	want, err := GenerateSchema(SchemaBase)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Schema, want) {
		t.Error("schema.json is not what the settings table and schema.base.json make: run go generate ./internal/matrix")
	}
}

// TestSchemaRefsResolve catches a $ref to a definition that does not exist.
func TestSchemaRefsResolve(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(Schema, &schema); err != nil {
		t.Fatal(err)
	}
	defs := schema["$defs"].(map[string]any)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				name, found := strings.CutPrefix(ref, "#/$defs/")
				if _, exists := defs[name]; !found || !exists {
					t.Errorf("dangling $ref %q", ref)
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(schema)
}

func lookup(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		if list, isList := v.([]any); isList {
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(list) {
				t.Fatalf("schema has no %v", path)
			}
			v = list[i]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok || m[p] == nil {
			t.Fatalf("schema has no %v", path)
		}
		v = m[p]
	}
	return v
}

func sortedKeys(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not an object: %v", v)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
