package text

import (
	"encoding/json"
	"fmt"
	"strings"
)

// QuoteJSON is s as a JSON string literal in which every control and
// bidirectional character is a \u escape, as are '<', '>' and '&'. The
// value reads back unchanged, but the literal shows nothing that could
// reorder or hide the text around it, and cannot end an HTML comment.
// encoding/json escapes only the C0 controls, not DEL, C1 or U+202E.
func QuoteJSON(s string) string {
	q, _ := json.Marshal(s) // a string always marshals; invalid UTF-8 becomes U+FFFD
	var b strings.Builder
	for _, r := range string(q) {
		if unsafeRune(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
