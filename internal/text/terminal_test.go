package text

import "testing"

func TestShownIsWhatATerminalShows(t *testing.T) {
	for in, want := range map[string]string{
		"plain line": "plain line",
		"\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[m":    "red and bold green",
		" 10%|█         |\r 50%|█████     |\r100%|██████████|": "100%|██████████|",
		"done\r":                       "done",
		"\x1b]0;window title\x07after": "after",
		"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\": "link",
		"\x1b(Bcharset":           "charset",
		"cut at the end \x1b[3":   "cut at the end ",
		"::error::x\r::notice::y": "::notice::y", // the views fence whatever is left
	} {
		if got := Shown(in); got != want {
			t.Errorf("Shown(%q) = %q, want %q", in, got, want)
		}
	}
}
