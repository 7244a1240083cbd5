package text

import (
	"fmt"
	"time"
)

// Duration is how every view shows a length of time: tenths of a second
// under a minute ("0.3s", "12.3s"), whole seconds above ("2m48s",
// "1h0m5s"). It rounds once, to a tenth, before choosing the form, so
// 59.96s reads "1m0s" and never "60.0s". Negative durations read as zero.
func Duration(d time.Duration) string {
	d = max(d, 0).Round(100 * time.Millisecond)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// Precise is a duration set against a limit or another run's time, as
// precise as its size needs: "30ms", "1.2s", "5m1s". A 50 ms build must not
// read as "0.1s" beside its +1332%, nor a 30ms phase limit as "0.0s".
func Precise(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// DurationMs is Duration for the milliseconds a report stores.
func DurationMs(v int64) string { return Duration(time.Duration(v) * time.Millisecond) }

// PreciseMs is Precise for the milliseconds a report stores.
func PreciseMs(v int64) string { return Precise(time.Duration(v) * time.Millisecond) }
