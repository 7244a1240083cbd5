// Package actions is the GitHub Actions plumbing: fencing text the program
// does not control, neutralising workflow commands, annotations with per-step
// caps, step outputs with a random delimiter, and inputs. Nothing here panics
// or exits the process; every failure is returned as an error.
package actions

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/trt-action/trt-action/internal/text"
)

// Fence stops the runner from executing workflow commands in the lines it
// encloses: "::stop-commands::TOKEN" starts ignoring commands and "::TOKEN::"
// resumes. The token is random so that fenced text cannot guess it and end
// the fence early.
type Fence struct{ token string }

// NewFence draws a 32-hex-digit token from rand (crypto/rand.Reader in
// production; a fixed reader in tests).
func NewFence(rand io.Reader) (Fence, error) {
	token, err := randomHex(rand)
	if err != nil {
		return Fence{}, fmt.Errorf("stop-commands token: %w", err)
	}
	return Fence{token: token}, nil
}

// Start is the line that stops command processing.
func (f Fence) Start() string { return "::stop-commands::" + f.token }

// End is the line that resumes command processing.
func (f Fence) End() string { return "::" + f.token + "::" }

// Wrap returns lines enclosed in the fence, one per line, ending in a newline.
// A line holding line breaks becomes several lines (the runner splits on \r
// as well as \n). Each line is also neutralised and any copy of the end
// marker broken, so the block stays inert even if the fence were lost.
func (f Fence) Wrap(lines ...string) string {
	var b strings.Builder
	b.WriteString(f.Start())
	b.WriteByte('\n')
	for _, l := range lines {
		for _, part := range SplitLines(l) {
			b.WriteString(f.Scrub(part))
			b.WriteByte('\n')
		}
	}
	b.WriteString(f.End())
	b.WriteByte('\n')
	return b.String()
}

// Scrub makes one line (without line breaks) safe to write inside this
// fence: a copy of the end marker is broken and the line is neutralised.
func (f Fence) Scrub(line string) string {
	line = neutraliseLine(line)
	if f.token != "" {
		line = strings.ReplaceAll(line, f.token, breakToken(f.token))
	}
	return line
}

// zwj is inserted to break command markers; it is not whitespace to the
// runner (.NET TrimStart), so "::" no longer starts the trimmed line.
const zwj = "\u200d"

// Neutralise makes s inert even if printed outside a fence: line breaks
// (\r\n, \r, \n) become \n, a "::" at the trimmed start of any line is
// broken, and every "##[" (recognised anywhere in a line) is broken.
func Neutralise(s string) string {
	lines := SplitLines(s)
	for i, l := range lines {
		lines[i] = neutraliseLine(l)
	}
	return strings.Join(lines, "\n")
}

func neutraliseLine(l string) string {
	l = strings.ReplaceAll(l, "##[", "#"+zwj+"#[")
	rest := strings.TrimLeftFunc(l, unicode.IsSpace)
	if strings.HasPrefix(rest, "::") {
		indent := l[:len(l)-len(rest)]
		l = indent + ":" + zwj + rest[1:]
	}
	return l
}

// SplitLines splits s where the runner would: at \r\n, \r and \n.
func SplitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(s, "\n")
}

func breakToken(token string) string {
	return token[:1] + zwj + token[1:]
}

func randomHex(rand io.Reader) (string, error) {
	var buf [16]byte
	if _, err := io.ReadFull(rand, buf[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(buf[:]), nil
}

// Group returns a ::group:: line whose title is reduced to safe characters
// (letters, digits, spaces and a little punctuation), so no title can carry
// a command, a line break or an escape sequence.
func Group(title string) string {
	return "::group::" + safeTitle(title)
}

// EndGroup closes the open group (groups cannot nest).
func EndGroup() string { return "::endgroup::" }

// maxTitle bounds group titles; long titles are unreadable in the log anyway.
const maxTitle = 120

// safeTitle keeps letters, digits, spaces and ". , _ - + = / ( ) [ ] @ ✔ ✖ ⏹"
// and replaces anything else with '_'.
func safeTitle(s string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == ' ':
			return r
		case strings.ContainsRune(".,_-+=/()[]@✔✖⏹—", r):
			return r
		}
		return '_'
	}, s)
	return text.CutRunes(safe, maxTitle+1)
}

// InertJSON makes JSON text safe to print in a workflow log without a fence,
// so it stays valid for a file or a pipe: a line of JSON never starts with
// "::", and "##[" can only stand inside a string, where "#" may be written
// as \u0023 without changing the value.
func InertJSON(data []byte) []byte {
	return bytes.ReplaceAll(data, []byte("##["), []byte(`#\u0023[`))
}

// InertJSONWriter passes JSON text through InertJSON. "##[" must not
// straddle two writes: the event stream writes each line whole.
type InertJSONWriter struct{ W io.Writer }

func (i InertJSONWriter) Write(p []byte) (int, error) {
	if _, err := i.W.Write(InertJSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
