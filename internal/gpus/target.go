package gpus

import (
	"fmt"
	"strings"
)

// Model is a GPU as far as an engine depends on it: TensorRT tunes an
// engine for one GPU model, so the engine cache keys a tensorrt build by
// the name and compute capability of the GPU it runs on.
type Model struct {
	Device
	Name       string // "NVIDIA A100-SXM4-80GB"
	ComputeCap string // "8.0"
}

// Target is the model in one line: "NVIDIA A100-SXM4-80GB, compute capability 8.0".
func (m Model) Target() string { return m.Name + ", compute capability " + m.ComputeCap }

// NvidiaSMIModels asks nvidia-smi for every GPU's name and compute
// capability (nvidia-smi of drivers 510 and later knows compute_cap).
func NvidiaSMIModels() ([]Model, error) {
	out, err := queryGPUs("index,uuid,name,compute_cap")
	if err != nil {
		return nil, err
	}
	return parseModels(out)
}

// parseModels reads "index, uuid, name, compute_cap" lines; a name may
// hold commas, the other fields never do.
func parseModels(out []byte) ([]Model, error) {
	var models []Model
	for _, line := range csvLines(out) {
		fields := strings.Split(line, ",")
		if len(fields) < 4 {
			return nil, fmt.Errorf("nvidia-smi: unexpected line %q, want index, UUID, name and compute capability", line)
		}
		d, err := parseDevice(fields[0], fields[1], line)
		if err != nil {
			return nil, err
		}
		m := Model{Device: d, ComputeCap: strings.TrimSpace(fields[len(fields)-1]),
			Name: strings.TrimSpace(strings.Join(fields[2:len(fields)-1], ","))}
		if m.Name == "" || m.ComputeCap == "" || strings.Contains(m.ComputeCap, "N/A") {
			return nil, fmt.Errorf("nvidia-smi: no name or compute capability in %q (a driver older than 510 does not report compute_cap)", line)
		}
		models = append(models, m)
	}
	return models, nil
}

// TargetOf is the target of a build given device (an index or UUID as
// --gpus hands them out), or with device "" of a build that runs wherever
// CUDA puts it: then every GPU visible (the inherited CUDA_VISIBLE_DEVICES,
// or all nvidia-smi lists) must be the same model, since CUDA's first
// device need not be nvidia-smi's first.
func TargetOf(device, visible string, models []Model) (string, error) {
	if device != "" {
		m, err := modelOf(device, models)
		if err != nil {
			return "", err
		}
		return m.Target(), nil
	}
	var candidates []Model
	for _, e := range strings.Split(visible, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		m, err := modelOf(e, models)
		if err != nil {
			return "", fmt.Errorf("CUDA_VISIBLE_DEVICES=%s: %w", visible, err)
		}
		candidates = append(candidates, m)
	}
	if len(candidates) == 0 {
		candidates = models
	}
	if len(candidates) == 0 {
		return "", fmt.Errorf("nvidia-smi lists no GPU")
	}
	for _, m := range candidates[1:] {
		if m.Target() != candidates[0].Target() {
			return "", fmt.Errorf("the GPUs differ (%s; %s), and without --gpus CUDA picks one; give --gpus so each build's GPU is known", candidates[0], m)
		}
	}
	return candidates[0].Target(), nil
}

func (m Model) String() string { return m.Index + ": " + m.Target() }

// modelOf finds device by index or UUID (a prefix, as CUDA takes it).
func modelOf(device string, models []Model) (Model, error) {
	for _, m := range models {
		if m.Index == device || strings.HasPrefix(device, "GPU-") && strings.HasPrefix(m.UUID, device) {
			return m, nil
		}
	}
	if strings.HasPrefix(device, "MIG-") {
		return Model{}, fmt.Errorf("GPU %s is a MIG instance, whose GPU model nvidia-smi --query-gpu does not name", device)
	}
	return Model{}, fmt.Errorf("nvidia-smi does not list GPU %s", device)
}
