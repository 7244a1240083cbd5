package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/trt-action/trt-action/internal/settings"
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
				text = "=" + settingText(k, v)
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
				cell = text.Markdown(settingText(k, v))
			}
			sb.WriteString(" " + cell + " |")
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// settingText renders a setting's value in one short line, as the settings
// table (internal/settings) says its kind is written: sizes exactly in the
// largest unit that divides them ("1GiB"), pools as name=size in the
// table's order, shapes as min, opt and max per input, layer types as
// trtexec writes them in the order written; other lists joined by commas,
// mappings as key=value in key order.
func settingText(key string, v any) string {
	row, _ := settings.Lookup(key)
	switch row.Kind {
	case settings.Size:
		var n int64
		if as(v, &n) {
			return text.ExactSize(n)
		}
	case settings.Pools:
		var pools map[string]int64
		if as(v, &pools) {
			var parts []string
			for _, name := range row.ValueNames() {
				if size, ok := pools[name]; ok {
					parts = append(parts, name+"="+text.ExactSize(size))
				}
			}
			return strings.Join(parts, " ")
		}
	case settings.Shapes:
		var shapes map[string]settings.Shape
		if as(v, &shapes) {
			parts := make([]string, 0, len(shapes))
			for _, input := range slices.Sorted(maps.Keys(shapes)) {
				s := shapes[input]
				parts = append(parts, fmt.Sprintf("%s min=%s opt=%s max=%s", input,
					settings.DimsX(s.Min), settings.DimsX(s.Opt), settings.DimsX(s.Max)))
			}
			return strings.Join(parts, "; ")
		}
	case settings.LayerTypes:
		var list []settings.LayerType
		if as(v, &list) {
			parts := make([]string, len(list))
			for i, lt := range list {
				parts[i] = lt.Layer + ":" + lt.Type
			}
			return strings.Join(parts, ",")
		}
	}
	return valueText(v)
}

// as reads v, a Go value or one decoded from a report's JSON, into out
// through JSON, which is how the report holds it anyway.
func as(v any, out any) bool {
	data, err := json.Marshal(v)
	return err == nil && json.Unmarshal(data, out) == nil
}

// valueText renders any other value: lists joined by commas, mappings as
// key=value in key order.
func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = valueText(x)
		}
		return strings.Join(parts, ",")
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + valueText(v[k])
		}
		return strings.Join(parts, " ")
	case nil:
		return ""
	}
	// Numbers, booleans and typed values go through JSON.
	var generic any
	if data, err := json.Marshal(v); err == nil && json.Unmarshal(data, &generic) == nil {
		if _, isMap := generic.(map[string]any); isMap {
			return valueText(generic)
		}
		return strings.Trim(string(data), `"`)
	}
	return fmt.Sprint(v)
}
