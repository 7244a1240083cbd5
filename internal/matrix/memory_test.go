package matrix

import (
	"bytes"
	"strings"
	"testing"
)

// Memory budgets and sim.allocate take sizes as max-size does; a bad one
// is an error at its position, all at once; regression.memory is a
// percentage.
func TestMemoryKeys(t *testing.T) {
	f, err := parseContent("testdata/t.yml", []byte("version: 1\nregression: {memory: 20%}\nbuilds:\n"+
		"  - {name: a, backend: sim, sim: {allocate: 256MiB}, budgets: {memory: 8GiB, gpu-memory: 1.5GB}}\n"+
		"  - {name: b, backend: sim}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Builds[0], f.Builds[1]
	if a.Sim.Allocate != 256<<20 || a.Budgets.Memory != 8<<30 || a.Budgets.GPUMemory != 1_500_000_000 {
		t.Errorf("allocate %d, memory %d, gpu-memory %d", a.Sim.Allocate, a.Budgets.Memory, a.Budgets.GPUMemory)
	}
	if b.Sim.Allocate != 0 || b.Budgets.Memory != 0 || b.Budgets.GPUMemory != 0 {
		t.Errorf("unset: %+v %+v", b.Sim, b.Budgets)
	}
	if f.Regression == nil || f.Regression.MemoryPercent != 20 {
		t.Errorf("regression = %+v", f.Regression)
	}
	var plan bytes.Buffer
	if err := PlanJSON(&plan, f.Builds[:1], nil, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"memory":"8GiB"`, `"gpu_memory":"1500MB"`, `"allocate":268435456`} {
		if !strings.Contains(plan.String(), want) {
			t.Errorf("plan lacks %s: %s", want, plan.String())
		}
	}
	if got := budgetsText(a.Budgets); !strings.Contains(got, "memory 8GiB gpu-memory 1500MB") {
		t.Errorf("budgets cell = %q", got)
	}
	_, err = parseContent("testdata/t.yml", []byte("version: 1\nregression: {memory: lots}\nbuilds:\n"+
		"  - {name: a, backend: sim, sim: {allocate: 0}, budgets: {memory: 8 gigs}}\n"))
	for _, want := range []string{
		`t.yml:2:22: regression.memory`,
		`t.yml:4:45: sim.allocate: invalid size "0"`,
		`t.yml:4:67: budgets.memory: invalid size "8 gigs"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q: %v", want, err)
		}
	}
}
