package text

import "strconv"

// Count is n with its noun, singular for one: "1 build", "2 builds",
// "0 builds". The one place counts are pluralised, so no message says
// "1 builds". noun must form its plural with a plain "s".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
