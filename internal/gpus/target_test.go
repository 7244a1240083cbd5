package gpus

import (
	"strings"
	"testing"
)

func TestTargetOf(t *testing.T) {
	models, err := parseModels([]byte("0, GPU-aaaa-0, NVIDIA A100-SXM4-80GB, 8.0\n1, GPU-bbbb-1, NVIDIA A100-SXM4-80GB, 8.0\n2, GPU-cccc-2, NVIDIA L4, 8.9\n"))
	if err != nil {
		t.Fatal(err)
	}
	const a100, l4 = "NVIDIA A100-SXM4-80GB, compute capability 8.0", "NVIDIA L4, compute capability 8.9"
	for _, c := range []struct {
		device, visible, want, err string
	}{
		{"2", "", l4, ""},
		{"GPU-bbbb", "", a100, ""},      // a UUID prefix, as CUDA takes it
		{"", "0,1", a100, ""},           // alike: whichever CUDA picks
		{"", "", "", "the GPUs differ"}, // all three: CUDA may pick the L4
		{"", "1,2", "", "the GPUs differ"},
		{"7", "", "", "nvidia-smi does not list GPU 7"},
		{"MIG-x", "", "", "is a MIG instance"},
	} {
		got, err := TargetOf(c.device, c.visible, models)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("TargetOf(%q, %q): error %v, want %q", c.device, c.visible, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("TargetOf(%q, %q) = %q, %v; want %q", c.device, c.visible, got, err, c.want)
		}
	}
}

// An old driver's nvidia-smi without compute_cap must not give a key
// that leaves the capability out.
func TestModelsWithoutComputeCapability(t *testing.T) {
	if _, err := parseModels([]byte("0, GPU-a, Tesla T4, [N/A]\n")); err == nil || !strings.Contains(err.Error(), "older than 510") {
		t.Errorf("error %v, want one naming the driver", err)
	}
	if m, err := parseModels([]byte("0, GPU-a, NVIDIA RTX 6000, Ada Generation, 8.9\n")); err != nil || m[0].Name != "NVIDIA RTX 6000, Ada Generation" {
		t.Errorf("a name with a comma: %+v, %v", m, err)
	}
}

// NvidiaSMIModels runs nvidia-smi as the real one would be run.
func TestNvidiaSMIModelsOnPath(t *testing.T) {
	fakeNvidiaSMI(t, "#!/bin/sh\n[ \"$*\" = \"--query-gpu=index,uuid,name,compute_cap --format=csv,noheader\" ] || exit 9\nprintf '0, GPU-5e1c2a00-0000, NVIDIA H100 80GB HBM3, 9.0\\n'\n")
	m, err := NvidiaSMIModels()
	if err != nil || len(m) != 1 || m[0].Target() != "NVIDIA H100 80GB HBM3, compute capability 9.0" {
		t.Errorf("NvidiaSMIModels = %+v, %v", m, err)
	}
}
