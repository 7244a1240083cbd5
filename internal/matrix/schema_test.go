package matrix

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
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
	withoutMatrix := slices.DeleteFunc(slices.Clone(buildKeys), func(k string) bool { return k == "matrix" })
	tests := []struct {
		path   []string
		parser []string
	}{
		{[]string{"properties"}, topKeys},
		{[]string{"$defs", "build", "properties"}, buildKeys},
		{[]string{"$defs", "defaults", "properties"}, withoutMatrix},
		{[]string{"$defs", "budgets", "properties"}, budgetKeys},
		{[]string{"$defs", "sim", "properties"}, simKeys},
		{[]string{"$defs", "regression", "properties"}, regressionKeys},
		{[]string{"$defs", "cache", "properties"}, cacheKeys},
		{[]string{"$defs", "shape", "properties"}, shapeKeys},
		{[]string{"$defs", "matrix", "properties"}, matrixKeys},
		{[]string{"$defs", "memory-pools", "properties"}, memoryPools},
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
		{[]string{"$defs", "backend", "enum"}, Backends},
		{[]string{"$defs", "precisionName", "enum"}, precisionNames},
		{[]string{"$defs", "targetName", "enum"}, targetNames},
		{[]string{"$defs", "layerType", "enum"}, layerTypes},
		{[]string{"$defs", "tacticSourceName", "enum"}, tacticSources},
		{[]string{"$defs", "memoryPoolName", "enum"}, memoryPools},
		{[]string{"$defs", "previewFeatureName", "enum"}, previewFeatures},
		{[]string{"$defs", "builderFlagName", "enum"}, builderFlags},
	}
	// Every enum-valued setting lists exactly the parser's values.
	for _, spec := range settingSpecs {
		if spec.kind == kindEnum {
			enums = append(enums, struct {
				path   []string
				parser []string
			}{[]string{"$defs", spec.key, "anyOf", "0", "enum"}, spec.values})
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
