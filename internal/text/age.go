package text

import (
	"fmt"
	"time"
)

// Age says how long ago something happened, in the one unit a reader
// needs: "just now" (under a minute, or in the future: clocks of two
// machines disagree), "1 minute ago", "5 hours ago", "2 days ago".
func Age(d time.Duration) string {
	units := []struct {
		size time.Duration
		noun string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}}
	for _, u := range units {
		if d >= u.size {
			return fmt.Sprintf("%s ago", Count(int(d/u.size), u.noun))
		}
	}
	return "just now"
}
