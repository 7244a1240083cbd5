package text

import "testing"

func TestCountPluralisesAllButOne(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 builds"}, {1, "1 build"}, {2, "2 builds"}, {-1, "-1 builds"}, {1000, "1000 builds"}} {
		if got := Count(c.n, "build"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestCountPluralOfY(t *testing.T) {
	for noun, want := range map[string]string{"entry": "2 entries", "key": "2 keys", "day": "2 days", "y": "2 ys"} {
		if got := Count(2, noun); got != want {
			t.Errorf("Count(2, %q) = %q, want %q", noun, got, want)
		}
	}
}
