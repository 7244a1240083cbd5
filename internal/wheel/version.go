package wheel

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The grammar of a version, from PEP 440 (https://peps.python.org/pep-0440/,
// "Version scheme" and "Appendix B: Parsing version strings with regular
// expressions"): an optional "v", an optional epoch "N!", a release of dotted
// numbers, then an optional pre-release (a, b, rc and their spellings alpha,
// beta, c, pre, preview), post-release (post, rev, r, or "-N"), development
// release (dev) and local label "+seg[.seg]...", each marker with an optional
// separator before it and before its number. Letters are case-insensitive.
var (
	sep         = `[-_.]?`
	pep440Parts = `^v?` +
		`(?:(?P<epoch>[0-9]+)!)?` +
		`(?P<release>[0-9]+(?:\.[0-9]+)*)` +
		`(?:` + sep + `(?P<pre>alpha|beta|preview|pre|rc|a|b|c)` + sep + `(?P<pren>[0-9]+)?)?` +
		`(?:-(?P<postdash>[0-9]+)|` + sep + `(?P<post>post|rev|r)` + sep + `(?P<postn>[0-9]+)?)?` +
		`(?:` + sep + `(?P<dev>dev)` + sep + `(?P<devn>[0-9]+)?)?` +
		`(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?$`
	pep440 = regexp.MustCompile(`(?i)` + pep440Parts)

	// gitDescribe is `git describe --tags --dirty` output after a tag:
	// TAG-COUNT-gHASH, TAG-COUNT-gHASH-dirty or TAG-dirty.
	gitDescribe = regexp.MustCompile(`^(?P<tag>.+?)(?:-(?P<count>[0-9]+)-(?P<hash>g[0-9a-f]{4,40}))?(?P<dirty>-dirty)?$`)
)

// preNames is the normal spelling of each pre-release marker (PEP 440,
// "Pre-release spelling").
var preNames = map[string]string{"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc", "preview": "rc"}

// Version turns make's VERSION into the normalized PEP 440 version a wheel
// carries: a tag (v1.2.3 -> 1.2.3, v1.2.3-rc.1 -> 1.2.3rc1), git describe
// output after a tag (v1.2.3-4-gabc1234-dirty -> 1.2.3+4.gabc1234.dirty), or
// any PEP 440 version, written in its normal form. Anything else is an
// error that says what is allowed.
func Version(makeVersion string) (string, error) {
	if v, ok := normalize(makeVersion); ok {
		return v, nil
	}
	if m := gitDescribe.FindStringSubmatch(makeVersion); m != nil && (m[2] != "" || m[4] != "") {
		tag := m[1]
		var local []string
		if m[2] != "" {
			local = append(local, m[2], m[3])
		}
		if m[4] != "" {
			local = append(local, "dirty")
		}
		if !strings.Contains(tag, "+") {
			if v, ok := normalize(tag + "+" + strings.Join(local, ".")); ok {
				return v, nil
			}
		}
	}
	return "", fmt.Errorf("VERSION %q has no PEP 440 form (https://peps.python.org/pep-0440/), which a wheel's version must have; "+
		"use a tag such as v1.2.3 or v1.2.3-rc.1, git describe output after such a tag (v1.2.3-4-gabc1234, v1.2.3-4-gabc1234-dirty), "+
		"or a PEP 440 version such as 1.2.3, 1.2.3rc1, 1.2.3.post1, 1.2.3.dev4 or 0.0.0+test", makeVersion)
}

// normalize returns the normal form of a PEP 440 version (PEP 440,
// "Normalization"): lowercase, no "v", no leading zeros, no zero epoch,
// a/b/rc with a number, .postN, .devN, and a local label joined by dots.
func normalize(s string) (string, bool) {
	m := pep440.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	group := func(name string) string { return strings.ToLower(m[pep440.SubexpIndex(name)]) }
	var b strings.Builder
	if e := number(group("epoch")); e != "" && e != "0" {
		b.WriteString(e + "!")
	}
	release := strings.Split(group("release"), ".")
	for i, n := range release {
		release[i] = number(n)
	}
	b.WriteString(strings.Join(release, "."))
	if pre := group("pre"); pre != "" {
		b.WriteString(preNames[pre] + numberOrZero(group("pren")))
	}
	if n := group("postdash"); n != "" {
		b.WriteString(".post" + number(n))
	} else if group("post") != "" {
		b.WriteString(".post" + numberOrZero(group("postn")))
	}
	if group("dev") != "" {
		b.WriteString(".dev" + numberOrZero(group("devn")))
	}
	if local := group("local"); local != "" {
		segs := strings.FieldsFunc(local, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
		for i, seg := range segs {
			if n := number(seg); n != "" {
				segs[i] = n // a numeric segment compares as a number, so it is written as one
			}
		}
		b.WriteString("+" + strings.Join(segs, "."))
	}
	return b.String(), true
}

// number is a string of digits without its leading zeros ("" if s is not
// all digits).
func number(s string) string {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return ""
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil { // longer than 64 bits: drop the zeros by hand
		if t := strings.TrimLeft(s, "0"); t != "" {
			return t
		}
		return "0"
	}
	return strconv.FormatUint(n, 10)
}

func numberOrZero(s string) string {
	if s == "" {
		return "0"
	}
	return number(s)
}
