//go:build benchscripts

// Command benchscripts measures script builds (issue: builder scripts) on
// TensorRT-RTX on the CPU and prints BENCHMARKS.md's "Builder scripts"
// tables: Polygraphy building the onnx wheel's light models with and
// without trt-action (paired, the order alternating), and the time from a
// build budget's end to the command's end. scripts/bench-scripts runs it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
)

func main() {
	bin := flag.String("bin", "bin/trt-action", "the trt-action binary")
	python := flag.String("python", os.Getenv("TRT_ACTION_SCRIPT_PYTHON"), "the builder-script venv's python")
	pairs := flag.Int("n", 9, "pairs per model")
	models := flag.String("models", "squeezenet,resnet50,densenet121", "light models of the onnx wheel")
	stopRuns := flag.Int("stop-runs", 7, "runs of the budget-stop measurement")
	script := flag.String("script", "test/realbuild/testdata/build_engine.py", "the slow builder script")
	flag.Parse()
	*bin, _ = filepath.Abs(*bin)
	*script, _ = filepath.Abs(*script)
	light := lightDir(*python)
	polygraphy := filepath.Join(filepath.Dir(*python), "polygraphy")
	tmp, err := os.MkdirTemp("", "benchscripts-")
	must(err)
	defer os.RemoveAll(tmp)

	fmt.Println("| Model | Without (median) | With trt-action (median) | Paired difference (median) | Overhead |")
	fmt.Println("|---|--:|--:|--:|--:|")
	for _, m := range strings.Split(*models, ",") {
		model := filepath.Join(light, "light_"+m+".onnx")
		engine := filepath.Join(tmp, m+".engine")
		plain := []string{polygraphy, "convert", model, "-o", engine}
		with := append([]string{*bin, "run", "--backend", backend.TensorRTRTX, "--report", filepath.Join(tmp, "r.json"), "--"}, plain...)
		var a, b, d []time.Duration
		for i := range *pairs {
			run := func(argv []string) time.Duration { return timed(argv, tmp) }
			var x, y time.Duration
			if i%2 == 0 {
				x = run(plain)
				y = run(with)
			} else {
				y = run(with)
				x = run(plain)
			}
			a, b, d = append(a, x), append(b, y), append(d, y-x)
		}
		ma, mb, md := median(a), median(b), median(d)
		fmt.Printf("| %s | %s | %s | %+.0f ms | %+.1f%% |\n", m, ms(ma), ms(mb), float64(md)/1e6, 100*float64(md)/float64(ma))
	}
	fmt.Println()
	fmt.Println("| Build budget | Stop latency (deadline to the command's end), median | min | max | runs |")
	fmt.Println("|--:|--:|--:|--:|--:|")
	var lat []time.Duration
	for range *stopRuns {
		report := filepath.Join(tmp, "stop.json")
		argv := []string{*bin, "run", "--backend", backend.TensorRTRTX, "--build-budget", "1s", "--report", report, "--",
			*python, *script, "--step-sleep", "0.05", "--out", filepath.Join(tmp, "slow.engine")}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = tmp
		_ = cmd.Run() // exits 3: over budget
		var r struct {
			Builds []struct {
				Status        string `json:"status"`
				StopLatencyMs int64  `json:"stop_latency_ms"`
			} `json:"builds"`
		}
		data, err := os.ReadFile(report)
		must(err)
		must(json.Unmarshal(data, &r))
		if r.Builds[0].Status != "budget-exceeded" {
			fmt.Fprintln(os.Stderr, "unexpected status", r.Builds[0].Status)
			os.Exit(1)
		}
		lat = append(lat, time.Duration(r.Builds[0].StopLatencyMs)*time.Millisecond)
	}
	fmt.Printf("| 1s | %s | %s | %s | %d |\n", ms(median(lat)), ms(slices.Min(lat)), ms(slices.Max(lat)), len(lat))
}

func lightDir(python string) string {
	out, err := exec.Command(python, "-c", "import onnx, os; print(os.path.dirname(onnx.__file__))").Output()
	must(err)
	return filepath.Join(strings.TrimSpace(string(out)), "backend", "test", "data", "light")
}

func timed(argv []string, dir string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "POLYGRAPHY_USE_TENSORRT_RTX=1")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n%s", strings.Join(argv, " "), err, out)
		os.Exit(1)
	}
	return time.Since(start)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/1e6) }

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
