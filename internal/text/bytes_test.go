package text

import "testing"

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 12_345_678: "12.3 MB", 300 << 20: "314.6 MB", 5e12: "5.0 TB", 7e15: "7000.0 TB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
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
