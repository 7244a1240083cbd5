package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/trt-action/trt-action/internal/settings"
	"github.com/trt-action/trt-action/internal/text"
)

// settingCells are each build's settings (its Settings.Applied) rendered
// (settingText), key to cell, each once per table.
func settingCells(applied []map[string]any) []map[string]string {
	rows := map[string]settings.Setting{} // each key's row, looked up once
	cells := make([]map[string]string, len(applied))
	for i, a := range applied {
		cells[i] = make(map[string]string, len(a))
		for k, v := range a {
			row, seen := rows[k]
			if !seen {
				row, _ = settings.Lookup(k)
				rows[k] = row
			}
			cells[i][k] = settingText(row, v)
		}
	}
	return cells
}

// settingsThatDiffer lists, sorted, the setting keys whose cell is not
// the same in every build: what a matrix axis (or a build's own keys)
// changed. A key some builds lack counts as differing.
func settingsThatDiffer(cells []map[string]string) []string {
	if len(cells) < 2 {
		return nil
	}
	differs := map[string]bool{}
	for _, c := range cells {
		for k := range c {
			if _, done := differs[k]; done {
				continue
			}
			first, firstHas := cells[0][k]
			differs[k] = slices.ContainsFunc(cells[1:], func(c map[string]string) bool {
				v, has := c[k]
				return has != firstHas || v != first
			})
		}
	}
	var keys []string
	for k, d := range differs {
		if d {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func applied(s *Settings) map[string]any {
	if s == nil {
		return nil
	}
	return s.Applied
}

// settingsTable is the summary's table of the settings that differ across
// builds, one row per build; "" when none differ. Builds that ran a
// command are left out: builder settings do not apply to them (their
// TensorRT builds' settings are in their own section), and their empty
// rows would make every key look as if it differed.
func settingsTable(all []Build) string {
	var builds []*Build
	var applies []map[string]any
	for i := range all {
		if all[i].Script == nil {
			builds = append(builds, &all[i])
			applies = append(applies, applied(all[i].Settings))
		}
	}
	if len(builds) < 2 {
		return ""
	}
	cells := settingCells(applies)
	keys := settingsThatDiffer(cells)
	if len(keys) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("\n### Settings that differ\n\n| Build |")
	for _, k := range keys {
		sb.WriteString(" " + text.Markdown(k) + " |")
	}
	sb.WriteString("\n|---|" + strings.Repeat("---|", len(keys)) + "\n")
	for i, b := range builds {
		sb.WriteString("| " + text.Markdown(b.Name) + " |")
		for _, k := range keys {
			cell := "—"
			if v, has := cells[i][k]; has {
				cell = text.Markdown(v)
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
func settingText(row settings.Setting, v any) string {
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
			return shapesText(shapes)
		}
	case settings.Profiles:
		var profiles []map[string]settings.Shape
		if as(v, &profiles) {
			parts := make([]string, len(profiles))
			for i, shapes := range profiles {
				parts[i] = fmt.Sprintf("[%d] %s", i, shapesText(shapes))
			}
			return strings.Join(parts, " ")
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

// shapesText is one optimization profile: min, opt and max per input, in
// the inputs' order.
func shapesText(shapes map[string]settings.Shape) string {
	parts := make([]string, 0, len(shapes))
	for _, input := range slices.Sorted(maps.Keys(shapes)) {
		s := shapes[input]
		parts = append(parts, fmt.Sprintf("%s min=%s opt=%s max=%s", input,
			settings.DimsX(s.Min), settings.DimsX(s.Opt), settings.DimsX(s.Max)))
	}
	return strings.Join(parts, "; ")
}

// as reads v into out: as it is when it has out's type already (a live
// run's values), else through JSON, which is how a report read back holds
// it (float64, []any, map[string]any).
func as[T any](v any, out *T) bool {
	if t, ok := v.(T); ok {
		*out = t
		return true
	}
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
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		// As JSON writes it, which uses an exponent outside this range.
		if a := math.Abs(v); a == 0 || (a >= 1e-6 && a < 1e21) {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	// Other numbers and typed values go through JSON.
	var generic any
	if data, err := json.Marshal(v); err == nil && json.Unmarshal(data, &generic) == nil {
		if _, isMap := generic.(map[string]any); isMap {
			return valueText(generic)
		}
		return strings.Trim(string(data), `"`)
	}
	return fmt.Sprint(v)
}
