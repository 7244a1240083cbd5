package report

import "testing"

// A run that is over says so, and says what failed it, in its headline:
// the summary's title, the last log line and the comment's.
func TestHeadlineOfAnEndedRun(t *testing.T) {
	byBudget := &Report{Complete: true, Ended: "run budget 3s exceeded", DurationMs: 3_100, Builds: []Build{
		okBuild("a", 0, 1), {Name: "b", Status: StatusBudgetExceeded}, {Name: "c", Status: StatusCancelled}}}
	killedShard := &Report{Ended: "merged from incomplete shard reports", DurationMs: 5_000, Builds: []Build{
		okBuild("a", 0, 1), {Name: "b", Status: StatusRunning}, {Name: "c", Status: StatusPending}}}
	regressed := &Report{Complete: true, DurationMs: 9_000, Builds: []Build{okBuild("a", 0, 1), okBuild("b", 0, 1)},
		Regressions: []Regression{{Name: "b", Percent: 41.4}}}
	many := &Report{Complete: true, DurationMs: 9_000, Builds: []Build{okBuild("a", 0, 1)},
		Regressions: []Regression{{Name: "a", Percent: 30}, {Name: "b", Percent: 31}, {Name: "c", Percent: 32}, {Name: "d", Percent: 33}}}
	for _, c := range []struct {
		r    *Report
		want string
	}{
		{byBudget, "❌ run budget 3s exceeded: 1 over budget, 1 cancelled, 1 ok — 3 builds in 3.1s"},
		{killedShard, "❌ merged from incomplete shard reports: 1 ok, 1 never finished, 1 never started — 3 builds in 5.0s"},
		{regressed, "❌ 1 regression (b +41%), 2 ok — 2 builds in 9.0s"},
		{many, "❌ 4 regressions (a +30%, b +31%, c +32%, …), 1 ok — 1 build in 9.0s"},
	} {
		if got := Headline(c.r); got != c.want {
			t.Errorf("Headline = %q\n          want %q", got, c.want)
		}
	}
}
