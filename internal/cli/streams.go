package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// Streams are a command's standard streams, and what we know of them. One
// object decides whether output is a terminal; tests set the answers.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer

	OutTTY  bool
	ErrTTY  bool
	Width   func() int // terminal width of Out; 80 when unknown
	NoColor bool       // NO_COLOR is set
}

// SystemStreams describes the process's own streams.
func SystemStreams() *Streams {
	outFd, errFd := int(os.Stdout.Fd()), int(os.Stderr.Fd())
	_, noColor := os.LookupEnv("NO_COLOR")
	return &Streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		OutTTY: term.IsTerminal(outFd), ErrTTY: term.IsTerminal(errFd),
		NoColor: noColor,
		Width: func() int {
			if w, _, err := term.GetSize(outFd); err == nil && w > 0 {
				return w
			}
			return 80
		},
	}
}
