package actions

// Seq is seq for the tests outside the package (fence_test.go), which use
// actionstest and so cannot be inside it.
var Seq = seq

// MaxTitle is maxTitle for fence_test.go.
const MaxTitle = maxTitle
