package matrix

import "testing"

// Annotations point at the builds' own positions, from the builds already
// loaded: the matrix file is not read again (here it does not even exist).
func TestLocatorUsesLoadedPositions(t *testing.T) {
	builds := []Build{
		{Name: "a", Pos: Pos{File: "gone/trt-matrix.yml", Line: 7, Column: 5}},
		{Name: "b"}, // no position known
	}
	locate := Locator("gone/trt-matrix.yml", builds)
	if locate == nil {
		t.Fatal("no locator for a matrix that is not on disk")
	}
	for name, want := range map[string]int{"a": 7, "b": 1, "not-in-matrix": 1} {
		if file, line := locate(name); file != "gone/trt-matrix.yml" || line != want {
			t.Errorf("%s: %s:%d, want line %d", name, file, line, want)
		}
	}
	if Locator("", builds) != nil {
		t.Error("a locator without a matrix file")
	}
}
