package cli

import (
	"bytes"
	"fmt"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/matrix"
)

func init() {
	register("validate", subcommand{summary: "check a matrix file and report every error", run: runValidate})
	register("plan", subcommand{summary: "list the builds a matrix file expands to", run: runPlan})
	register("schema", subcommand{summary: "print the JSON Schema of the matrix file", run: runSchema})
}

func runValidate(c *Command, args []string) (int, error) {
	fs := c.newFlags("validate", "[-f FILE]")
	file := fs.String("f", matrix.DefaultFile, "the matrix `file`")
	if err := c.parse(fs, args, map[string]string{"f": "matrix"}); err != nil {
		return ExitInvalid, err
	}
	m, err := matrix.Load(*file)
	if err != nil {
		return ExitInvalid, err
	}
	c.printUntrusted(c.Streams.Out, fmt.Sprintf("%s: ok, %d builds\n", *file, len(m.Builds)))
	return ExitOK, nil
}

func runPlan(c *Command, args []string) (int, error) {
	fs := c.newFlags("plan", "[-f FILE] [--only NAME]... [--json | --trtexec] [--github-matrix [--shards N] [--baseline REPORT]]")
	file := fs.String("f", matrix.DefaultFile, "the matrix `file`")
	asJSON := fs.Bool("json", false, "print JSON")
	asTrtexec := fs.Bool("trtexec", false, "print each build as the trtexec (or tensorrt_rtx) command that builds it")
	var only listFlag
	fs.Var(&only, "only", "only builds with this `name` or glob")
	var sf shardFlags
	sf.register(fs)
	if err := c.parse(fs, args, map[string]string{"f": "matrix", "only": "only"}); err != nil {
		return ExitInvalid, err
	}
	_, builds, err := loadBuilds(*file, only, "")
	if err != nil {
		return ExitInvalid, err
	}
	if handled, err := c.printShardPlan(sf, builds); handled {
		if err != nil {
			return ExitInvalid, err
		}
		return ExitOK, nil
	}
	var out bytes.Buffer
	if *asJSON {
		// For files and pipes: valid JSON, inert in a workflow log.
		if err := matrix.PlanJSON(&out, builds); err != nil {
			return ExitFailed, err
		}
		_, err := c.Streams.Out.Write(actions.InertJSON(out.Bytes()))
		return ExitOK, err
	}
	if *asTrtexec {
		matrix.PlanTrtexec(&out, builds)
	} else {
		matrix.PlanText(&out, builds)
	}
	c.printUntrusted(c.Streams.Out, out.String())
	return ExitOK, nil
}

func runSchema(c *Command, args []string) (int, error) {
	fs := c.newFlags("schema", "")
	if err := c.parse(fs, args, nil); err != nil {
		return ExitInvalid, err
	}
	_, err := c.Streams.Out.Write(matrix.Schema)
	return ExitOK, err
}
