package text

import (
	"strings"
	"testing"
)

// Text we do not control is cut to 80 runes, then quoted: no line end or
// control character of it reaches a message.
func TestQuotedCut(t *testing.T) {
	long := strings.Repeat("é", 200)
	for in, want := range map[string]string{
		"application/vnd.oci.image.layer.v1.tar": `"application/vnd.oci.image.layer.v1.tar"`,
		"a\nb\x1b[31m":                           `"a\nb\x1b[31m"`,
		long:                                     `"` + strings.Repeat("é", 79) + `…"`,
	} {
		if got := QuotedCut(in); got != want {
			t.Errorf("QuotedCut(%.20q…) = %.40s…, want %.40s…", in, got, want)
		}
	}
}
