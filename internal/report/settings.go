package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// settingsThatDiffer lists, sorted, the setting keys whose value is not
// the same in every build: what a matrix axis (or a build's own keys)
// changed. A key some builds lack counts as differing.
func settingsThatDiffer(builds []Build) []string {
	if len(builds) < 2 {
		return nil
	}
	values := map[string]map[string]bool{} // key -> distinct values, "" for absent
	for _, b := range builds {
		for k := range applied(b) {
			values[k] = map[string]bool{}
		}
	}
	for _, b := range builds {
		a := applied(b)
		for k := range values {
			v, has := a[k]
			text := ""
			if has {
				text = "=" + settingText(v)
			}
			values[k][text] = true
		}
	}
	var keys []string
	for k, vs := range values {
		if len(vs) > 1 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func applied(b Build) map[string]any {
	if b.Settings == nil {
		return nil
	}
	return b.Settings.Applied
}

// settingsTable is the summary's table of the settings that differ across
// builds, one row per build; "" when none differ.
func settingsTable(builds []Build) string {
	keys := settingsThatDiffer(builds)
	if len(keys) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("\n### Settings that differ\n\n| Build |")
	for _, k := range keys {
		sb.WriteString(" " + text.Markdown(k) + " |")
	}
	sb.WriteString("\n|---|" + strings.Repeat("---|", len(keys)) + "\n")
	for _, b := range builds {
		sb.WriteString("| " + text.Markdown(b.Name) + " |")
		a := applied(b)
		for _, k := range keys {
			cell := "—"
			if v, has := a[k]; has {
				cell = text.Markdown(settingText(v))
			}
			sb.WriteString(" " + cell + " |")
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// settingText renders a setting's value in one short line: lists joined
// by commas, mappings as key=value in key order, sizes in bytes.
func settingText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = settingText(x)
		}
		return strings.Join(parts, ",")
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + settingText(v[k])
		}
		return strings.Join(parts, " ")
	case nil:
		return ""
	}
	// Numbers, booleans and typed values (maps of sizes, shapes) go through
	// JSON, which is how the report holds them anyway.
	var generic any
	if data, err := json.Marshal(v); err == nil && json.Unmarshal(data, &generic) == nil {
		if _, isMap := generic.(map[string]any); isMap {
			return settingText(generic)
		}
		return strings.Trim(string(data), `"`)
	}
	return fmt.Sprint(v)
}
