package text

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	checkEach(t, "Line", Line, map[string]string{
		"a\nb\r\nc\td":           "a b  c d",
		"x\x1b[2Jy\x00z\x7f":     "x[2Jyz",
		"evil\u202egnp.exe":      "evilgnp.exe",
		"iso\u2066late\u2069":    "isolate",
		"bad \xff utf8":          "bad \uFFFD utf8",
		"résumé — ok":            "résumé — ok",
		"arabic\u061cmark\u200f": "arabicmark",
	})
}

func TestLinesKeepsLineBreaks(t *testing.T) {
	if got, want := lines("a\r\nb\rc\n\td\x1b\u202e"), "a\nb\nc\n d"; got != want {
		t.Errorf("lines = %q, want %q", got, want)
	}
}

// Neutral breaks what GitHub's patterns (see Neutral) make live and
// nothing else.
func TestNeutral(t *testing.T) {
	checkEach(t, "Neutral", Neutral, map[string]string{
		"fix-@octocat":                 "fix-@\u200boctocat",
		"@org/team please":             "@\u200borg/team please",
		"see #123 and GH-45":           "see #\u200b123 and GH-\u200b45",
		"owner/repo#7 gh-8":            "owner/repo#\u200b7 gh-\u200b8",
		"a @ b, # c, GH-x, @":          "a @ b, # c, GH-x, @",
		"x-1 and ##[error]":            "x-1 and ##[error]",
		"&commat;u &#x40;v &#35;1 & x": "&\u200bcommat;u &\u200b#x40;v &\u200b#\u200b35;1 & x",
		// Issue 17: a file path that holds the signs where GitHub sees no
		// mention, reference or character reference passes unchanged.
		"out/resnet@2x/high-1/a&b.engine": "out/resnet@2x/high-1/a&b.engine",
		"ci@example.com x_@y &amp":        "ci@example.com x_@y &amp",
		// A name followed by "/" is no user, and "#" is no team name; but
		// "#12" after "/" is a reference (the reviewer's path).
		"out/@o/#12/a.engine": "out/@o/#\u200b12/a.engine",
		"out/@o/a.engine":     "out/@\u200bo/a.engine", // the team o/a
		// A name followed by a dot and a word character is no mention; a
		// name at the end of a sentence is.
		"out/@team.engine (gh-2)":    "out/@team.engine (gh-\u200b2)",
		"thanks @octocat. And @a..b": "thanks @\u200boctocat. And @\u200ba..b",
		"@octocat_x @x@y @a-b-":      "@octocat_x @\u200bx@y @\u200ba-b-",
		"(@org/team-a) @org/-x":      "(@\u200borg/team-a) @org/-x",
		// A number that does not end its word is no reference.
		"#12a #12_ GH-3b #4-x #5.": "#12a #12_ GH-3b #\u200b4-x #\u200b5.",
		"a#1 (b#2 [x.y#3 {u/r.s#4": "a#\u200b1 (b#\u200b2 [x.y#\u200b3 {u/r.s#\u200b4",
		"x=a#1 a/b/c#2 a.b/c#3":    "x=a#1 a/b/c#2 a.b/c#3",
		// What a renderer may write around s could complete a pattern:
		// ".a" may end a repository's name ("trt-action." + ".a#4"), and
		// a team's name may follow "@org/".
		".a#4": ".a#\u200b4",
		"@o/":  "@\u200bo/",
		// Outside ASCII nothing is a word character (Ruby's \w).
		"résumé#5 é@octocat xgh-6": "résumé#\u200b5 é@\u200boctocat xgh-6",
		// A match of the user pattern takes the "-" the next "@" would need
		// before it; both are broken, the safe side.
		"@a-@b": "@\u200ba-@\u200bb",
	})
}

func TestMarkdown(t *testing.T) {
	got := Markdown("a|b *c* _d_ `e` [f](g) ~h~ #1 $x$ <b>&amp; \\ @u\nnext")
	want := "a\\|b \\*c\\* \\_d\\_ \\`e\\` \\[f\\](g) \\~h\\~ \\#\u200b1 \\$x\\$ &lt;b&gt;&amp;\u200bamp; \\\\ @\u200bu next"
	if got != want {
		t.Errorf("Markdown:\n got %q\nwant %q", got, want)
	}
}

func TestHTML(t *testing.T) {
	got := HTML("</summary><b>@team</b>\n#9 \"q\"")
	want := "&lt;/summary&gt;&lt;b&gt;@\u200bteam&lt;/b&gt; #\u200b9 &#34;q&#34;"
	if got != want {
		t.Errorf("HTML:\n got %q\nwant %q", got, want)
	}
}

func TestCutRunes(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"longer", 5, "long…"},
		{"ééééé", 3, "éé…"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
	} {
		if got := CutRunes(c.in, c.n); got != c.want {
			t.Errorf("CutRunes(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestCutAtLine(t *testing.T) {
	s := "one\ntwo\nthree\n"
	for n, want := range map[int]string{100: s, len(s): s, 10: "one\ntwo\n", 8: "one\ntwo\n", 7: "one\n", 3: "", 0: ""} {
		if got := CutAtLine(s, n); got != want {
			t.Errorf("CutAtLine(%d) = %q, want %q", n, got, want)
		}
		if got := CutAtLine(s, n); len(got) > max(n, 0) {
			t.Errorf("CutAtLine(%d) is %d bytes", n, len(got))
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:              "0.0s",
		0:                         "0.0s",
		340 * time.Millisecond:    "0.3s",
		12345 * time.Millisecond:  "12.3s",
		59960 * time.Millisecond:  "1m0s",
		168*time.Second + 400*1e6: "2m48s",
		time.Hour + 5*time.Second: "1h0m5s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestPrecise(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:              "0s",
		30 * time.Millisecond:     "30ms",
		1234 * time.Millisecond:   "1.2s",
		301400 * time.Millisecond: "5m1s",
	} {
		if got := Precise(d); got != want {
			t.Errorf("Precise(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestNoUnsafeRuneSurvives(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	for _, out := range []string{Line(all.String()), Markdown(all.String()), HTML(all.String())} {
		for _, r := range out {
			if unsafeRune(r) {
				t.Fatalf("%U survived", r)
			}
		}
	}
}

func TestQuoteJSONReadsBack(t *testing.T) {
	for _, s := range []string{"plain", "x\u202egnp.exe", "del\x7f c1\u0085 nul\x00", "<!-- -->&", "é"} {
		q := QuoteJSON(s)
		for _, r := range q {
			if unsafeRune(r) || strings.ContainsRune("<>&", r) {
				t.Errorf("QuoteJSON(%q) = %q holds %U", s, q, r)
			}
		}
		var back string
		if err := json.Unmarshal([]byte(q), &back); err != nil || back != s {
			t.Errorf("QuoteJSON(%q) = %q reads back as %q, %v", s, q, back, err)
		}
	}
}

func TestEscaped(t *testing.T) {
	checkEach(t, "Escaped", Escaped, map[string]string{
		"plain \"quoted\" é": "plain \"quoted\" é",
		"a\nb\x1b[2J":        `a\nb\x1b[2J`,
		"csi\u009b2J":        `csi\u009b2J`,
		"x\u202egnp":         `x\u202egnp`,
		"bad\xff":            `bad\xff`,
	})
}

func TestMermaidName(t *testing.T) {
	checkEach(t, "MermaidName", MermaidName, map[string]string{
		"Timing tactics":            "Timing tactics",
		"a: b; c #d %%e\nf":         "a b c d e f",
		"section evil":              "▸ section evil",
		"click x call y()":          "▸ click x call y()",
		"":                          "unnamed",
		"@@@":                       "unnamed",
		strings.Repeat("long ", 20): strings.Repeat("long ", 11) + "long…",
	})
}

// checkEach checks f against every case, input to wanted output.
func checkEach(t *testing.T, name string, f func(string) string, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%q) = %q, want %q", name, in, got, want)
		}
	}
}

func TestAgeNamesOneUnit(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Hour, "just now"},
		{59 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{119 * time.Minute, "1 hour ago"},
		{5*time.Hour + 59*time.Minute, "5 hours ago"},
		{49 * time.Hour, "2 days ago"},
	} {
		if got := Age(c.d); got != c.want {
			t.Errorf("Age(%s) = %q, want %q", c.d, got, c.want)
		}
	}
}
