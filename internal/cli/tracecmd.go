package cli

import (
	"bytes"
	"os"
	"strings"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/trace"
)

func runTrace(c *Command, args []string) error {
	fs := c.newFlags("trace", "convert FILE|-  (an ANSI recording of NVIDIA's sample progress monitor, - for stdin; the trace goes to stdout)")
	if err := c.parse(fs, args, nil); err != nil {
		return err
	}
	if fs.NArg() != 2 || fs.Arg(0) != "convert" {
		return usagef("trace: want \"trace convert FILE\" (FILE an ANSI recording of NVIDIA's sample progress monitor, or - for stdin), got %q", fs.Args())
	}
	name := fs.Arg(1)
	in := c.Streams.In
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return invalid(err)
		}
		defer f.Close()
		in = f
	} else {
		name = "stdin"
	}
	events, err := trace.ConvertANSI(in)
	if err != nil {
		// ConvertANSI names its input "ansi" (ansi:LINE: …); name the file,
		// so the error reads FILE:LINE: … like every positioned error.
		msg := name + ": " + err.Error()
		if rest, ok := strings.CutPrefix(err.Error(), "ansi"); ok {
			msg = name + rest
		}
		return invalid(reworded{msg, err})
	}
	var out bytes.Buffer
	w := trace.NewWriter(&out)
	for _, ev := range events {
		if err := w.Write(ev); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// Phase names are the recording's text: keep them inert in a log.
	_, err = c.Streams.Out.Write(actions.InertJSON(out.Bytes()))
	return err
}

// reworded is err in other words.
type reworded struct {
	msg string
	err error
}

func (e reworded) Error() string { return e.msg }
func (e reworded) Unwrap() error { return e.err }
