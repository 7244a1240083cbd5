package text

import "fmt"

// Bytes is a size in decimal units, as the report and the cache commands
// write it: "812 B", "12.3 MB".
func Bytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, "kMGT"[i])
}

// ExactSize is a size exactly, in the largest unit that divides it, as a
// matrix file writes one: binary units first ("1GiB", "48KiB"), then
// decimal ("1500MB"), else bytes ("1234B"). matrix.ParseSize reads it back
// to the same number, so a setting shows as the user wrote it in the usual
// case and never rounded.
func ExactSize(n int64) string {
	units := []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}}
	for _, u := range units {
		if n != 0 && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.suffix)
		}
	}
	return fmt.Sprintf("%dB", n)
}
