// Package gpus parses --gpus and hands GPUs out to build workers: each
// worker gets one device (its CUDA_VISIBLE_DEVICES) and a device runs at most
// a set number of builds at a time, since engine builds time tactics and two
// builds sharing a GPU skew each other's measurements.
package gpus

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// Probe lists the machine's GPUs as CUDA_VISIBLE_DEVICES values.
type Probe func() ([]string, error)

// Parse reads a --gpus value: "" (no assignment: nil, nil), "all" (every
// device probe reports), or a comma list of device indexes or UUIDs
// ("0,1,3", "GPU-5e1c...", "MIG-..."), as CUDA_VISIBLE_DEVICES accepts them.
func Parse(spec string, probe Probe) ([]string, error) {
	if spec == "" {
		return nil, nil
	}
	given := spec
	spec = strings.TrimSpace(spec)
	switch spec {
	case "":
		return nil, fmt.Errorf("--gpus %q: no device given; use all, or indexes and UUIDs separated by commas (0,1,3), or leave --gpus out", given)
	case "all":
		devs, err := probe()
		if err != nil {
			return nil, fmt.Errorf("--gpus all: cannot list the GPUs: %w; or name the devices (--gpus 0,1)", err)
		}
		if len(devs) == 0 {
			return nil, errors.New("--gpus all: no GPU found (nvidia-smi listed none)")
		}
		return devs, nil
	}
	var devs []string
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		d := strings.TrimSpace(item)
		if !validDevice(d) {
			return nil, fmt.Errorf("--gpus %q: %q is not a device; use all, or indexes and UUIDs separated by commas (0,1,3)", spec, d)
		}
		if seen[d] {
			return nil, fmt.Errorf("--gpus %q: device %s is listed twice", spec, d)
		}
		seen[d] = true
		devs = append(devs, d)
	}
	return devs, nil
}

func validDevice(d string) bool {
	if n, err := strconv.Atoi(d); err == nil {
		return n >= 0 && d == strconv.Itoa(n)
	}
	for _, prefix := range []string{"GPU-", "MIG-"} {
		if rest, ok := strings.CutPrefix(d, prefix); ok && rest != "" {
			return !strings.ContainsAny(rest, " \t,=")
		}
	}
	return false
}

// NvidiaSMI is the Probe for real machines: it asks nvidia-smi for the
// device indexes.
func NvidiaSMI() ([]string, error) {
	out, err := exec.Command("nvidia-smi", "--query-gpu=index", "--format=csv,noheader").Output()
	if errors.Is(err, exec.ErrNotFound) {
		return nil, errors.New("nvidia-smi is not installed or not on PATH (it comes with the NVIDIA driver)")
	}
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && len(exitErr.Stderr) > 0 {
			return nil, fmt.Errorf("nvidia-smi: %w: %s", err, bytes.TrimSpace(exitErr.Stderr))
		}
		return nil, fmt.Errorf("nvidia-smi: %w", err)
	}
	return parseIndexList(out)
}

// parseIndexList reads nvidia-smi's csv,noheader output: one index per line.
func parseIndexList(out []byte) ([]string, error) {
	var devs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !validDevice(line) {
			return nil, fmt.Errorf("nvidia-smi: unexpected line %q, want a device index", line)
		}
		devs = append(devs, line)
	}
	return devs, sc.Err()
}

// Pool hands out devices, at most perDevice builds on one device at a time.
// The least-busy device goes first (lowest position on ties), so builds
// spread over all GPUs before any GPU takes a second build.
type Pool struct {
	slots   chan struct{} // one token per free build slot, over all devices
	mu      sync.Mutex
	devices []string
	busy    []int
}

// NewPool makes a pool over devices; perDevice < 1 means 1.
func NewPool(devices []string, perDevice int) *Pool {
	perDevice = max(1, perDevice)
	p := &Pool{
		slots:   make(chan struct{}, len(devices)*perDevice),
		devices: devices,
		busy:    make([]int, len(devices)),
	}
	for range cap(p.slots) {
		p.slots <- struct{}{}
	}
	return p
}

// Acquire waits for a free slot and returns its device and the function that
// gives it back (safe to call more than once). It returns ctx's error if ctx
// ends first, and an error at once if the pool has no devices.
func (p *Pool) Acquire(ctx context.Context) (device string, release func(), err error) {
	if len(p.devices) == 0 {
		return "", nil, errors.New("gpus: no devices to assign")
	}
	select {
	case <-p.slots:
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
	p.mu.Lock()
	i := p.leastBusy()
	p.busy[i]++
	p.mu.Unlock()

	var once sync.Once
	return p.devices[i], func() { once.Do(func() { p.release(i) }) }, nil
}

// leastBusy is called with mu held and a slot taken, so the chosen device
// has room: the slot count bounds the total and least-busy spreads it.
func (p *Pool) leastBusy() int {
	best := 0
	for i, n := range p.busy {
		if n < p.busy[best] {
			best = i
		}
	}
	return best
}

func (p *Pool) release(i int) {
	p.mu.Lock()
	p.busy[i]--
	p.mu.Unlock()
	p.slots <- struct{}{}
}

// Env is the environment entry that pins a worker to device.
func Env(device string) string {
	return "CUDA_VISIBLE_DEVICES=" + device
}

// WithinVisible reads devices relative to an inherited CUDA_VISIBLE_DEVICES
// (visible, as the runner or a container set it): index i means its i-th
// entry, and "all" means all of them. A runner limited to some GPUs thus
// never lands builds on another runner's. With visible empty, devices are
// returned unchanged.
func WithinVisible(spec, visible string, probe Probe) ([]string, error) {
	var entries []string
	for _, e := range strings.Split(visible, ",") {
		if e = strings.TrimSpace(e); e != "" {
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return Parse(spec, probe)
	}
	devs, err := Parse(spec, func() ([]string, error) {
		idx := make([]string, len(entries))
		for i := range entries {
			idx[i] = strconv.Itoa(i)
		}
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	for i, d := range devs {
		n, err := strconv.Atoi(d)
		if err != nil {
			continue // a UUID names one device whatever is visible
		}
		if n >= len(entries) {
			return nil, fmt.Errorf("--gpus %q: device %d is not among the %d visible ones (CUDA_VISIBLE_DEVICES=%s)", spec, n, len(entries), visible)
		}
		devs[i] = entries[n]
	}
	return devs, nil
}
