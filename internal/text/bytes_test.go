package text

import (
	"strings"
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 12_345_678: "12.3 MB", 300 << 20: "314.6 MB", 5e12: "5.0 TB", 7e15: "7000.0 TB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRate(t *testing.T) {
	for _, c := range []struct {
		n    int64
		d    time.Duration
		want string
	}{{1 << 30, 12 * time.Second, "89.5 MB/s"}, {500, 2 * time.Second, "250 B/s"}, {1 << 30, 0, "—"}, {0, time.Second, "0 B/s"}} {
		if got := Rate(c.n, c.d); got != c.want {
			t.Errorf("Rate(%d, %s) = %q, want %q", c.n, c.d, got, c.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"20GiB": 20 << 30, "512 MiB": 512 << 20, "1.5GB": 1_500_000_000, "4096": 4096, "2TB": 2e12,
		"600kB": 600_000, "600KB": 600_000, "600kb": 600_000, "1gib": 1 << 30, "3 tib": 3 << 40, "12 B": 12} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1GiB", "GiB", "2 gigs", "1PB"} {
		if _, err := ParseBytes(in); err == nil || !strings.Contains(err.Error(), "B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), in any case") {
			t.Errorf("ParseBytes(%q): %v, want an error listing the units", in, err)
		}
	}
}

// What Bytes writes (cache ls, the report), ParseBytes reads back as the
// size it shows. Before, ls printed "600.0 kB" and max-size refused "600kB".
func TestParseBytesReadsWhatBytesWrites(t *testing.T) {
	for _, n := range []int64{1, 999, 1000, 440_758, 12_345_678, 5e12} {
		shown := Bytes(n)
		got, err := ParseBytes(shown)
		if err != nil {
			t.Errorf("ParseBytes(Bytes(%d) = %q): %v", n, shown, err)
			continue
		}
		if again := Bytes(got); again != shown {
			t.Errorf("Bytes(%d) = %q, read back as %d, shown %q", n, shown, got, again)
		}
	}
}

func TestExactSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 30: "1GiB", 2 << 30: "2GiB", 48 << 10: "48KiB", 1536 << 20: "1536MiB",
		1_500_000_000: "1500MB", 4_000_000: "4MB", 1234: "1234B", 0: "0B", 3 << 40: "3072GiB"} {
		if got := ExactSize(n); got != want {
			t.Errorf("ExactSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestExactBinary(t *testing.T) {
	type exact struct {
		count int64
		unit  string
	}
	for n, want := range map[int64]exact{1 << 30: {1, "GiB"}, 3 << 40: {3072, "GiB"}, 1536 << 20: {1536, "MiB"},
		48 << 10: {48, "KiB"}, 1_500_000_000: {1_500_000_000, "B"}, 1234: {1234, "B"}, 0: {0, "GiB"}} {
		if count, unit := ExactBinary(n); count != want.count || unit != want.unit {
			t.Errorf("ExactBinary(%d) = %d %s, want %d %s", n, count, unit, want.count, want.unit)
		}
	}
}
