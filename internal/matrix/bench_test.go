package matrix

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// tenThousandBuilds is a matrix file of 100 builds, each with a 10 x 10
// matrix: 10,000 expanded builds.
func tenThousandBuilds() []byte {
	var b strings.Builder
	b.WriteString("version: 1\ndefaults:\n  backend: sim\n  budgets: {build: 15m, stall: 2m, warn: 80%, phases: {\"Timing tactics\": 5m}}\nbuilds:\n")
	for i := range 100 {
		fmt.Fprintf(&b, `  - name: net%d-${{ matrix.variant }}-b${{ matrix.batch }}
    engine: out/net%d-${{ matrix.variant }}-b${{ matrix.batch }}.engine
    precision: [fp16, int8]
    opt-level: 3
    workspace: 2GiB
    shapes: {input: {min: [1, 3, 224, 224], opt: ["${{ matrix.batch }}", 3, 224, 224], max: [4096, 3, 224, 224]}}
    budgets: {phases: {"Building engine/Timing tactics": 4m}}
    sim: {threads: 2, fault: none}
    matrix:
      variant: [v0, v1, v2, v3, v4, v5, v6, v7, v8, v9]
      batch: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
`, i, i)
	}
	return []byte(b.String())
}

func BenchmarkLoadAndPlan10k(b *testing.B) {
	data := tenThousandBuilds()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := parseContent("bench/trt-builds.yml", data)
		if err != nil {
			b.Fatal(err)
		}
		if len(f.Builds) != 10000 {
			b.Fatalf("%d builds", len(f.Builds))
		}
		if err := PlanJSON(io.Discard, f.Builds, nil, ""); err != nil {
			b.Fatal(err)
		}
	}
}
