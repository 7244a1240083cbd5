package text

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/text/texttest"
)

// charRef is an HTML character reference, which another tool would decode.
var charRef = regexp.MustCompile(`^&(?:#|[A-Za-z0-9]+;)`)

// liveSigns are the offsets of the signs GitHub's patterns make live in s
// (texttest.LiveIn) and of the "&" of character references, with s as it
// is and with a word right before it or right after it: a renderer may
// write either (see Neutral). A sign that ends s cannot be broken.
func liveSigns(s string) map[int]bool {
	live := map[int]bool{}
	for _, context := range []struct{ before, after string }{{"", ""}, {"a", ""}, {"", "a"}} {
		for _, l := range texttest.LiveIn(context.before + s + context.after) {
			if at := l.At - len(context.before); at >= 0 && at < len(s)-1 {
				live[at] = true
			}
		}
	}
	for i := range len(s) {
		if charRef.MatchString(s[i:]) {
			live[i] = true
		}
	}
	return live
}

// Neutral breaks every sign GitHub's patterns make live and no other: all
// strings of up to four pieces from an alphabet of signs and what
// surrounds them, and longer random ones.
func TestNeutralBreaksWhereGitHubsPatternsMatch(t *testing.T) {
	pieces := []string{"@", "#", "-", "/", ".", "&", ";", "a", "1", "_", "gh", " ", "(", "é"}
	check := func(s string) {
		want := liveSigns(s)
		got := map[int]bool{}
		plain := 0
		out := Neutral(s)
		for i := 0; i < len(out); i++ {
			if strings.HasPrefix(out[i:], breaker) {
				got[plain-1] = true
				i += len(breaker) - 1
				continue
			}
			plain++
		}
		for i := range want {
			if !got[i] {
				t.Errorf("Neutral(%q) = %q leaves the live %q at %d", s, out, s[i], i)
			}
		}
		for i := range got {
			if !want[i] {
				t.Errorf("Neutral(%q) = %q breaks %q at %d, which GitHub leaves alone", s, out, s[i], i)
			}
		}
	}
	var walk func(prefix string, n int)
	walk = func(prefix string, n int) {
		check(prefix)
		if n == 0 {
			return
		}
		for _, p := range pieces {
			walk(prefix+p, n-1)
		}
	}
	walk("", 4)
	rng := rand.New(rand.NewSource(1))
	for range 20000 {
		var b strings.Builder
		for range 5 + rng.Intn(10) {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		check(b.String())
	}
}
