package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/actions"
	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/text"
)

func runValidate(c *Command, args []string) error {
	fs := c.newFlags("validate", "[-f FILE | FILE]")
	file := fs.String("f", matrix.DefaultFile, "the matrix `file` (or give it as the argument)")
	given, err := c.parseGiven(fs, args, map[string]string{"f": "matrix"})
	if err != nil {
		return err
	}
	if err := matrixArg("validate", fs, given, file); err != nil {
		return err
	}
	m, err := matrix.LoadPartial(*file)
	if m == nil {
		return matrixError(err)
	}
	// What the matrix alone names, with no flags (a run's flags add more,
	// which build checks); for a matrix with errors, what of it is valid,
	// listed with them.
	exe, _ := c.workerExecutable() // not found: checked against nothing
	files := matrixFiles(m, m.Builds, "", exe, &cacheFlags{})
	if err := errors.Join(err, runfiles.Check(files)); err != nil {
		return err
	}
	c.printMatrixWarnings(m)
	c.printUntrusted(c.Streams.Out, fmt.Sprintf("%s: ok, %s\n", *file, text.Count(len(m.Builds), "build")))
	return nil
}

func runPlan(c *Command, args []string) error {
	fs := c.newFlags("plan", "[-f FILE | FILE] [--only NAME]... [--json | --trtexec] [--github-matrix [--shards N] [--baseline REPORT]]")
	file := fs.String("f", matrix.DefaultFile, "the matrix `file` (or give it as the argument)")
	asJSON := fs.Bool("json", false, "print JSON")
	asTrtexec := fs.Bool("trtexec", false, "print each build as the trtexec (or tensorrt_rtx) command that builds it")
	var only listFlag
	fs.Var(&only, "only", "only builds with this `name` or glob")
	var sf shardFlags
	sf.register(fs)
	given, err := c.parseGiven(fs, args, map[string]string{"f": "matrix", "only": "only"})
	if err != nil {
		return err
	}
	if err := matrixArg("plan", fs, given, file); err != nil {
		return err
	}
	// A plan is made where the models are not (the fan-out's plan job).
	m, builds, err := loadBuilds(*file, only, "", withoutInputs)
	if err != nil {
		return err
	}
	c.printMatrixWarnings(m)
	if handled, err := c.printShardPlan(sf, builds); handled {
		return err
	}
	var out bytes.Buffer
	if *asJSON {
		// For files and pipes: valid JSON, inert in a workflow log.
		// The store a build run without --cache-remote would ask.
		store := (&remoteFlags{}).choose(m, c.Getenv).url
		if err := matrix.PlanJSON(&out, builds, cache.PlanKeys(builds, c.Getenv("CUDA_VISIBLE_DEVICES")), store); err != nil {
			return err
		}
		_, err := c.Streams.Out.Write(actions.InertJSON(out.Bytes()))
		return err
	}
	if *asTrtexec {
		matrix.PlanTrtexec(&out, builds)
	} else {
		matrix.PlanText(&out, builds)
	}
	c.printUntrusted(c.Streams.Out, out.String())
	return nil
}

func runSchema(c *Command, args []string) error {
	fs := c.newFlags("schema", "")
	if err := c.parse(fs, args, nil); err != nil {
		return err
	}
	_, err := c.Streams.Out.Write(matrix.Schema)
	return err
}

// printMatrixWarnings writes what the matrix file should hear but does not
// make it invalid (a trtexec line's ignored, deprecated or removed flags) to
// stderr, one FILE:LINE:COL line each, inert in a workflow log.
func (c *Command) printMatrixWarnings(m *matrix.File) {
	if len(m.Warnings) == 0 {
		return
	}
	var b strings.Builder
	for _, w := range m.Warnings {
		fmt.Fprintf(&b, "%s: warning: %s\n", w.Pos, w.Msg)
	}
	c.printUntrusted(c.Streams.Err, b.String())
}

// matrixArg takes the matrix file as the command's one argument, so that
// "validate FILE" checks FILE. An argument and -f together, or a second
// argument, are refused rather than one of them ignored. The argument wins
// over the matrix input (INPUT_MATRIX), as any command-line flag does.
func matrixArg(verb string, fs *flag.FlagSet, given map[string]bool, file *string) error {
	switch {
	case fs.NArg() == 0:
		return nil
	case fs.NArg() > 1:
		return usagef("%s takes at most one argument, the matrix file; got %d: %q, %q…", verb, fs.NArg(), fs.Arg(0), fs.Arg(1))
	case given["f"]:
		return usagef("%s: the matrix file is given twice, as -f %q and as the argument %q; give one", verb, *file, fs.Arg(0))
	}
	*file = fs.Arg(0)
	return nil
}
