package text

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sizes have this one home, both ways: Bytes writes one as the report and
// the cache commands show it ("440.8 kB"), ExactSize as a matrix file
// writes it ("1GiB"), ExactBinary for a tool that reads binary units only,
// and ParseBytes reads what both Bytes and ExactSize write as well as the
// sizes people write in the matrix file and on the command line ("4GiB",
// "512 MiB", "1.5GB", "600kB").

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

// byteUnits are the units ParseBytes takes, by their lower-case spelling:
// SI (powers of 1000, as Bytes writes them) and IEC (powers of 1024).
var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseBytes reads a size: a positive number, with or without a space
// before its unit, the unit in any case: "2GiB", "512 MiB", "1.5GB",
// "440.8 kB" (what Bytes writes), or a plain byte count. The error says
// what is allowed.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, knownUnit := byteUnits[unit]
	v, err := strconv.ParseFloat(num, 64)
	bytes := v * float64(mult)
	if !knownUnit || err != nil || bytes < 1 || bytes > math.MaxInt64/2 {
		return 0, fmt.Errorf("invalid size %q; write a positive number with a unit: B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), in any case", s)
	}
	return int64(bytes), nil
}

// ExactSize is a size exactly, in the largest unit that divides it, as a
// matrix file writes one: binary units first ("1GiB", "48KiB"), then
// decimal ("1500MB"), else bytes ("1234B"). ParseBytes reads it back
// to the same number, so a setting shows as the user wrote it in the usual
// case and never rounded.
func ExactSize(n int64) string {
	if n == 0 {
		return "0B"
	}
	count, unit := exactIn(n, exactUnits)
	return fmt.Sprintf("%d%s", count, unit)
}

// ExactBinary is n exactly in the largest binary unit that divides it:
// the count and "GiB", "MiB" or "KiB", else n and "B" (zero is 0 GiB).
// It serves tools that read binary units only, each spelled their own
// way (trtexec's G, M and K).
func ExactBinary(n int64) (count int64, unit string) { return exactIn(n, binaryUnits) }

// exactUnit is a unit a size is written exactly in.
type exactUnit struct {
	suffix string
	size   int64
}

var (
	binaryUnits = []exactUnit{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
	// exactUnits are ExactSize's: the binary ones first, then the decimal.
	exactUnits = append(slices.Clone(binaryUnits), exactUnit{"GB", 1e9}, exactUnit{"MB", 1e6}, exactUnit{"KB", 1e3})
)

// exactIn is n in the first of units that divides it, else in bytes.
func exactIn(n int64, units []exactUnit) (int64, string) {
	for _, u := range units {
		if n%u.size == 0 {
			return n / u.size, u.suffix
		}
	}
	return n, "B"
}

// Rate is n bytes moved in d as a transfer rate, in Bytes's units:
// "85.3 MB/s"; "—" when d is not above zero (nothing to divide by).
func Rate(n int64, d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return Bytes(int64(float64(n)/d.Seconds())) + "/s"
}
