package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/trt-action/trt-action/"

// docs/architecture.md's package table lists every package of the binary,
// each with exactly the packages of ours it imports, and every one of
// those in a row above it (imports point down the list), as go list says.
func TestArchitecturePackageTable(t *testing.T) {
	doc := page(t, "docs/architecture.md")
	var order []string               // packages, as the table lists them
	imports := map[string][]string{} // package -> its Imports cell, as written
	for _, line := range strings.Split(section(t, doc, "## Packages and what each may import"), "\n") {
		row := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(row) != 3 || !strings.HasPrefix(strings.TrimSpace(row[0]), "`") {
			continue
		}
		pkg := strings.Trim(row[0], "` ")
		order = append(order, pkg)
		for _, cell := range strings.Split(row[2], ",") {
			if name := strings.Trim(cell, "` —"); name != "" {
				imports[pkg] = append(imports[pkg], name)
			}
		}
	}
	// A cell names a package by its path below internal/ ("view/jsonl"), or
	// whole ("native", "cli").
	full := func(name string) string {
		for _, pkg := range order {
			if pkg == name || pkg == "internal/"+name || strings.HasSuffix(pkg, "/"+name) {
				return pkg
			}
		}
		return name
	}
	list := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./cmd/trt-action")
	list.Dir = repoRoot
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	actual := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue
		}
		actual[pkg] = []string{}
		for _, imp := range fields[1:] {
			if ours, ok := strings.CutPrefix(imp, module); ok {
				actual[pkg] = append(actual[pkg], ours)
			}
		}
	}
	for pkg := range actual {
		if !slices.Contains(order, pkg) {
			t.Errorf("package %s is not in the table", pkg)
		}
	}
	for i, pkg := range order {
		got, ok := actual[pkg]
		if !ok {
			t.Errorf("the table lists %s, which the binary does not hold", pkg)
			continue
		}
		var listed []string
		for _, name := range imports[pkg] {
			dep := full(name)
			listed = append(listed, dep)
			if j := slices.Index(order, dep); j < 0 || j > i {
				t.Errorf("%s imports %s, which is not above it in the table", pkg, name)
			}
		}
		slices.Sort(listed)
		slices.Sort(got)
		if !slices.Equal(listed, got) {
			t.Errorf("%s: the table says it imports %v; go list says %v", pkg, listed, got)
		}
	}
	if !strings.Contains(doc, "TestArchitecturePackageTable") {
		t.Error("the page does not say which test checks its table")
	}
}
