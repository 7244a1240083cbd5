package text

import (
	"strconv"
	"strings"
)

// Count is n with its noun, singular for one: "1 build", "2 builds",
// "0 builds", "2 entries". The one place counts are pluralised, so no
// message says "1 builds". noun must form its plural with a plain "s", or
// end in a consonant and "y" ("entry": "entries").
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + plural(noun)
}

func plural(noun string) string {
	if stem, ok := strings.CutSuffix(noun, "y"); ok && stem != "" && !strings.ContainsAny(stem[len(stem)-1:], "aeiou") {
		return stem + "ies"
	}
	return noun + "s"
}
