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
