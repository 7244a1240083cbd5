package report_test

import (
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

func init() {
	report.UseFixtures(reporttest.Sample, reporttest.OKBuild, reporttest.OverBudgetBuild, reporttest.PhaseTree, reporttest.Mixed, reporttest.Settled)
	report.UseRebuiltFixture(reporttest.Rebuilt)
	report.UseScriptsFixture(reporttest.Scripts, reporttest.CachedScripts)
	report.UseSharedFixtures(reporttest.Shared, reporttest.HostileShared)
}
