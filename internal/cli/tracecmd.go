package cli

import (
	"bytes"
	"fmt"
	"os"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/trace"
)

func init() {
	register("trace", subcommand{summary: "convert an ANSI progress recording to a trace: trace convert FILE", run: runTrace})
}

func runTrace(c *Command, args []string) (int, error) {
	if len(args) != 2 || args[0] != "convert" {
		return ExitInvalid, usagef("usage: trt-action trace convert FILE (an ANSI recording of NVIDIA's sample progress monitor; the trace goes to stdout)")
	}
	f, err := os.Open(args[1])
	if err != nil {
		return ExitInvalid, err
	}
	defer f.Close()
	events, err := trace.ConvertANSI(f)
	if err != nil {
		return ExitInvalid, fmt.Errorf("%s: %w", args[1], err)
	}
	var out bytes.Buffer
	w := trace.NewWriter(&out)
	for _, ev := range events {
		if err := w.Write(ev); err != nil {
			return ExitFailed, err
		}
	}
	if err := w.Flush(); err != nil {
		return ExitFailed, err
	}
	// Phase names are the recording's text: keep them inert in a log.
	_, err = c.Streams.Out.Write(actions.InertJSON(out.Bytes()))
	return ExitOK, err
}
