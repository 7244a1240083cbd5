package cli

import (
	"flag"
	"fmt"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/outputs"
	"github.com/trt-action/trt-action/internal/shard"
)

// maxMatrixJobs is GitHub's limit on jobs one matrix may generate.
const maxMatrixJobs = 256

// shardFlags are plan's fan-out flags.
type shardFlags struct {
	githubMatrix bool
	shards       int
	baseline     string
}

func (s *shardFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.githubMatrix, "github-matrix", false, "print the builds as shards for strategy.matrix (JSON for fromJSON); in Actions also set output matrix")
	fs.IntVar(&s.shards, "shards", 0, "with --github-matrix: number of shards (default: one per build, at most 256)")
	fs.StringVar(&s.baseline, "baseline", "", "with --github-matrix: balance shards by the durations in this report `file`")
}

// printShardPlan handles --github-matrix: it prints the shard plan as one
// line of JSON and, in Actions, sets the step output "matrix" to it. It
// reports false when --github-matrix was not given, so plan goes on as usual.
// Its errors are typed for the exit code: bad flags and a bad baseline are
// usage errors, a step output not written an outputs.Error.
func (c *Command) printShardPlan(s shardFlags, builds []matrix.Build) (bool, error) {
	if !s.githubMatrix {
		if s.shards != 0 || s.baseline != "" {
			return true, usagef("--shards and --baseline of plan only apply with --github-matrix (they shape the shards); add --github-matrix or leave them out")
		}
		return false, nil
	}
	if s.shards < 0 {
		return true, usagef("--shards %d: must be at least 1 (or leave it out for one shard per build)", s.shards)
	}
	if len(builds) == 0 {
		return true, usagef("plan --github-matrix: no builds selected")
	}
	n := s.shards
	if n <= 0 {
		n = min(len(builds), maxMatrixJobs) // one per build, as far as GitHub allows
	}
	if n > maxMatrixJobs {
		return true, usagef("--shards %d: GitHub runs at most %d jobs per matrix", n, maxMatrixJobs)
	}
	baseline, err := readBaseline(s.baseline)
	if err != nil {
		return true, err
	}
	data, err := shard.GitHubMatrix(shard.Plan(builds, n, baseline))
	if err != nil {
		return true, err
	}
	fmt.Fprintln(c.Streams.Out, string(data))
	if gha := c.actions(); gha.InActions() {
		return true, outputs.SetStepOutput(gha, "matrix", string(data))
	}
	return true, nil
}
