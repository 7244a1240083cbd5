package report

// The sample reports live in reporttest, so the views' golden files are made
// from the same fixture. This package's own tests cannot import reporttest
// (it imports report), so fixtures_hook_test.go, an external test file, hands
// them in with useFixtures before any test runs.
var (
	sampleReport    func() *Report
	okBuild         func(name string, startMs, durMs int64) Build
	overBudgetBuild func(name string, startMs, durMs int64) Build
	phaseTree       func(endMs int64, finished bool) []*Phase
	mixedMatrix     func(n int) *Report
	settledReport   func(n int) *Report
	rebuiltReport   func() *Report
	scriptsReport   func() *Report
	cachedScripts   func() *Report
	sharedReport    func() *Report
	hostileShared   func() *Report
)

// UseFixtures sets the fixtures above; only fixtures_hook_test.go calls it.
func UseFixtures(sample func() *Report, ok, over func(string, int64, int64) Build, tree func(int64, bool) []*Phase, mixed, settled func(int) *Report) {
	sampleReport, okBuild, overBudgetBuild, phaseTree = sample, ok, over, tree
	mixedMatrix, settledReport = mixed, settled
}

// UseRebuiltFixture sets rebuiltReport; only fixtures_hook_test.go calls it.
func UseRebuiltFixture(rebuilt func() *Report) { rebuiltReport = rebuilt }

// UseScriptsFixture sets scriptsReport and cachedScripts; only
// fixtures_hook_test.go calls it.
func UseScriptsFixture(scripts, cached func() *Report) {
	scriptsReport, cachedScripts = scripts, cached
}

// UseSharedFixtures sets sharedReport and hostileShared; only
// fixtures_hook_test.go calls it.
func UseSharedFixtures(shared, hostile func() *Report) { sharedReport, hostileShared = shared, hostile }
