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
	OutSize func() (width, height int) // terminal size of Out; 0, 0 when unknown
	ErrSize func() (width, height int) // terminal size of Err
	NoColor bool                       // NO_COLOR is set
}

// SystemStreams describes the process's own streams.
func SystemStreams() *Streams {
	outFd, errFd := int(os.Stdout.Fd()), int(os.Stderr.Fd())
	_, noColor := os.LookupEnv("NO_COLOR")
	return &Streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		OutTTY: term.IsTerminal(outFd), ErrTTY: term.IsTerminal(errFd),
		NoColor: noColor,
		OutSize: termSize(outFd), ErrSize: termSize(errFd),
	}
}

// termSize reads a terminal's size each time, so a resize is seen.
func termSize(fd int) func() (int, int) {
	return func() (int, int) {
		w, h, err := term.GetSize(fd)
		if err != nil {
			return 0, 0
		}
		return w, h
	}
}
