//go:build cgo

package native

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/native/nvmltest"
)

// NVML is read through the functions and structs of NVML's C API: the
// stand-in, built from NVML's signatures, gives the processes of two
// GPUs, one process on both (summed), and more processes than the first
// buffer holds (NVML_ERROR_INSUFFICIENT_SIZE, then again).
func TestNVMLReadsProcessesOfEveryGPU(t *testing.T) {
	for _, variant := range []string{nvmltest.Current, nvmltest.V1} {
		t.Run("variant"+variant, func(t *testing.T) {
			so := nvmltest.Build(t, variant)
			entries := []string{"0:100:1048576", "1:100:2097152", "1:200:4096"}
			for pid := 1000; pid < 1100; pid++ {
				entries = append(entries, fmt.Sprintf("0:%d:%d", pid, pid))
			}
			t.Setenv("FAKE_NVML_DEVICES", "2")
			t.Setenv("FAKE_NVML_PROCS", strings.Join(entries, ","))
			n, err := OpenNVML(so)
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			for range 2 { // the grown buffer is kept
				got, err := n.Processes()
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 102 || got[100] != 3<<20 || got[200] != 4096 || got[1050] != 1050 {
					t.Fatalf("processes = %d of them, 100: %d, 200: %d, 1050: %d", len(got), got[100], got[200], got[1050])
				}
			}
		})
	}
}

// The GPUs' memory is every GPU's total, summed (the start-up check of
// gpu-memory budgets reads it).
func TestNVMLTotalMemoryIsEveryGPUsSummed(t *testing.T) {
	so := nvmltest.Build(t, nvmltest.Current)
	t.Setenv("FAKE_NVML_DEVICES", "3")
	t.Setenv("FAKE_NVML_TOTAL", "1000")
	n, err := OpenNVML(so)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if got, err := n.TotalMemory(); err != nil || got != 3000 {
		t.Errorf("total = %d, %v; want 3000", got, err)
	}
	n.Close()
	if _, err := n.TotalMemory(); err == nil {
		t.Error("a closed NVML gave a total")
	}
}

// A process NVML cannot measure (NVML_VALUE_NOT_AVAILABLE) is left out,
// not counted as 16 EB.
func TestNVMLLeavesOutUnknownFigures(t *testing.T) {
	so := nvmltest.Build(t, nvmltest.Current)
	t.Setenv("FAKE_NVML_PROCS", "0:7:18446744073709551615,0:8:10")
	n, err := OpenNVML(so)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	got, err := n.Processes()
	if err != nil || len(got) != 1 || got[8] != 10 {
		t.Fatalf("processes = %v, %v; want only pid 8", got, err)
	}
}

// Without a driver, or without the library, there is an error saying so
// (and the run goes on without GPU figures).
func TestNVMLWithoutDriver(t *testing.T) {
	so := nvmltest.Build(t, nvmltest.Current)
	t.Setenv("FAKE_NVML_INIT", "9")
	if _, err := OpenNVML(so); err == nil || err.Error() != "nvmlInit: Driver Not Loaded" {
		t.Errorf("error = %v, want nvmlInit's own words", err)
	}
	missing := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	if _, err := OpenNVML(missing); err == nil || !strings.Contains(err.Error(), "cannot load "+missing) {
		t.Errorf("error = %v", err)
	}
	notNVML := filepath.Join(t.TempDir(), "libc.so")
	libc, _ := filepath.Glob("/lib/x86_64-linux-gnu/libm.so.6")
	if len(libc) == 0 {
		return
	}
	if err := os.Symlink(libc[0], notNVML); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenNVML(notNVML); err == nil || !strings.Contains(err.Error(), "lacks the NVML functions") {
		t.Errorf("error = %v", err)
	}
}
