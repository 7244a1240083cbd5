package actions

// Seq is seq for the tests outside the package (fence_test.go), which use
// actionstest and so cannot be inside it.
var Seq = seq

// MaxTitle is maxTitle for fence_test.go.
const MaxTitle = maxTitle

// Token is the fence's secret, for fence_test.go.
func (f Fence) Token() string { return f.token }

// SafeTitle is safeTitle for fence_test.go.
var SafeTitle = safeTitle

// left is how many more notes of level fit.
func (b *Budget) left(level string) int {
	return b.perLevel - b.used[normalLevel(level)]
}
