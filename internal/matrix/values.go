package matrix

import (
	"errors"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/trt-action/trt-action/internal/text"
)

// decoder reads values for one expanded build: every string is
// substituted with the build's matrix combination first.
type decoder struct {
	w       *walker
	combo   combo
	inBuild bool // ${{ matrix.X }} is meaningful only inside builds
	// lines are the build's trtexec lines (its defaults', its own) as
	// read for this combination; trtexecIgnored their inference-only flags
	// and trtexecWarnings what their flags warn of.
	lines           []lineRead
	trtexecIgnored  []string
	trtexecWarnings []string
}

// text returns a scalar's substituted value; want names the expected type.
func (d *decoder) text(n *yaml.Node, what, want string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.w.errs.add(d.w.pos(n), "%s: expected %s, got %s", what, want, describe(n))
		return "", false
	}
	return d.substitute(n, n.Value)
}

func (d *decoder) str(n *yaml.Node, what string) (string, bool) {
	return d.text(n, what, "a string")
}

// duration reads a Go duration ("90s", "15m", "1h30m") that must be > 0.
func (d *decoder) duration(n *yaml.Node, what string) (time.Duration, bool) {
	s, ok := d.text(n, what, "a duration like 90s or 15m")
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		d.w.errs.add(d.w.pos(n), "%s: invalid duration %q; use Go syntax like 90s, 15m or 1h30m", what, s)
		return 0, false
	}
	if v <= 0 {
		d.w.errs.add(d.w.pos(n), "%s: duration must be greater than 0, got %q", what, s)
		return 0, false
	}
	return v, true
}

// percent reads "80%": greater than 0 and at most limit (0 = no upper limit).
func (d *decoder) percent(n *yaml.Node, what string, limit float64) (float64, bool) {
	s, ok := d.text(n, what, `a percentage like "80%"`)
	if !ok {
		return 0, false
	}
	num, hasSign := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !hasSign || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.w.errs.add(d.w.pos(n), "%s: invalid percentage %q; write a number followed by %%, like \"80%%\"", what, s)
		return 0, false
	}
	if v <= 0 || (limit > 0 && v > limit) {
		if limit > 0 {
			d.w.errs.add(d.w.pos(n), "%s: percentage must be greater than 0%% and at most %g%%, got %q", what, limit, s)
		} else {
			d.w.errs.add(d.w.pos(n), "%s: percentage must be greater than 0%%, got %q", what, s)
		}
		return 0, false
	}
	return v, true
}

// intIn reads an integer in [lo, hi].
func (d *decoder) intIn(n *yaml.Node, what string, lo, hi int) (int, bool) {
	s, ok := d.text(n, what, "an integer")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < lo || v > hi {
		d.w.errs.add(d.w.pos(n), "%s: expected an integer from %d to %d, got %q", what, lo, hi, s)
		return 0, false
	}
	return v, true
}

// enum reads one of a fixed set of words.
func (d *decoder) enum(n *yaml.Node, what string, allowed []string) (string, bool) {
	s, ok := d.text(n, what, "one of "+choices(allowed))
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		msg := "%s: unknown value %q"
		if c := closest(s, allowed); c != "" {
			msg += ` (did you mean "` + c + `"?)`
		}
		d.w.errs.add(d.w.pos(n), msg+"; allowed: %s", what, s, choices(allowed))
		return "", false
	}
	return s, true
}

// enumList reads one word or a list of words from allowed.
func (d *decoder) enumList(n *yaml.Node, what string, allowed []string) ([]string, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		s, ok := d.enum(n, what, allowed)
		return []string{s}, ok
	}
	items, ok := d.w.items(n, what, "a string or a list of strings")
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, good := d.enum(it, what, allowed); good {
			out = append(out, s)
		} else {
			ok = false
		}
	}
	return out, ok
}

// byteSize reads a size like "2GiB", "512MiB", "1.5GB" or a plain byte count.
func (d *decoder) byteSize(n *yaml.Node, what string) (int64, bool) {
	s, ok := d.text(n, what, "a size like 2GiB")
	if !ok {
		return 0, false
	}
	v, err := text.ParseBytes(s)
	if err != nil {
		d.w.errs.add(d.w.pos(n), "%s: %v", what, err)
		return 0, false
	}
	return v, true
}

// dims reads tensor dimensions: a list, or trtexec's form 1x3x224x224.
func (d *decoder) dims(n *yaml.Node, what string) ([]int64, bool) {
	if r := resolve(n); r.Kind == yaml.ScalarNode && !isNull(r) {
		return d.dimsText(r, what)
	}
	items, ok := d.w.items(n, what, "a list of dimensions like [1, 3, 224, 224] or 1x3x224x224")
	if !ok {
		return nil, false
	}
	if len(items) == 0 {
		d.w.errs.add(d.w.pos(n), "%s: expected at least one dimension", what)
		return nil, false
	}
	out := make([]int64, len(items))
	for i, it := range items {
		s, good := d.text(it, what, "a dimension (integer)")
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if good && (err != nil || v < 0) {
			d.w.errs.add(d.w.pos(it), "%s: expected a dimension (integer >= 0), got %q", what, s)
			good = false
		}
		ok = ok && good
		out[i] = v
	}
	return out, ok
}

// dimsText reads trtexec's shape form, 1x3x224x224.
func (d *decoder) dimsText(n *yaml.Node, what string) ([]int64, bool) {
	s, ok := d.text(n, what, "dimensions like 1x3x224x224")
	if !ok {
		return nil, false
	}
	parts := strings.Split(strings.TrimSpace(s), "x")
	out := make([]int64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 {
			d.w.errs.add(d.w.pos(n), "%s: %q is not a shape; write dimensions (integers >= 0) joined by x, like 1x3x224x224, or a list", what, s)
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// checkPhasePattern rejects patterns path.Match could never match.
func checkPhasePattern(pattern string) error {
	if strings.TrimSpace(pattern) == "" {
		return errors.New("empty phase pattern")
	}
	for _, part := range strings.Split(pattern, "/") {
		if part == "" {
			return errors.New("empty phase name between slashes")
		}
		if _, err := path.Match(part, ""); err != nil {
			return errors.New("bad glob " + strconv.Quote(part))
		}
	}
	return nil
}
