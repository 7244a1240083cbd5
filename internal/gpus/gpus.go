// Package gpus parses --gpus and hands GPUs out to build workers: each
// worker gets one device (its CUDA_VISIBLE_DEVICES) and a device runs at most
// a set number of builds at a time, since engine builds time tactics and two
// builds sharing a GPU skew each other's measurements.
package gpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trt-action/trt-action/internal/sigmask"
)

// Device is one GPU as nvidia-smi lists it.
type Device struct {
	Index string // "0", as CUDA_VISIBLE_DEVICES takes it
	UUID  string // "GPU-5e1c…"
}

func (d Device) String() string { return d.Index + " (" + d.UUID + ")" }

// Probe lists the machine's GPUs.
type Probe func() ([]Device, error)

// parse reads a --gpus value: "" (no assignment: nil, nil), "all" (every
// device probe reports), or a comma list of device indexes or UUIDs
// ("0,1,3", "GPU-5e1c...", "MIG-..."), as CUDA_VISIBLE_DEVICES accepts them.
func parse(spec string, probe Probe) ([]string, error) {
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
		indexes := make([]string, len(devs))
		for i, d := range devs {
			indexes[i] = d.Index
		}
		return indexes, nil
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

// nvidiaSMITimeout bounds the wait for nvidia-smi, which can hang when the
// driver does: every --gpus value now asks it, and a run must not hang
// before its first build because of a check.
var nvidiaSMITimeout = 15 * time.Second

// NvidiaSMI is the Probe for real machines: it asks nvidia-smi for the
// devices' indexes and UUIDs. nvidia-smi lists every device of the machine
// (or container), whatever CUDA_VISIBLE_DEVICES says.
func NvidiaSMI() ([]Device, error) {
	out, err := queryGPUs("index,uuid")
	if err != nil {
		return nil, err
	}
	return parseDeviceList(out)
}

// queryGPUs runs nvidia-smi --query-gpu for fields, bounded by
// nvidiaSMITimeout, and returns its csv,noheader output.
func queryGPUs(fields string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), nvidiaSMITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nvidia-smi", "--query-gpu="+fields, "--format=csv,noheader")
	cmd.WaitDelay = time.Second // a child it left holding the pipe must not hold us
	out, err := sigmask.Output(cmd)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("nvidia-smi: no answer in %s", nvidiaSMITimeout)
	}
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
	return out, nil
}

// parseDeviceList reads nvidia-smi's csv,noheader output: "index, uuid"
// per line.
func parseDeviceList(out []byte) ([]Device, error) {
	var devs []Device
	for _, line := range csvLines(out) {
		index, uuid, _ := strings.Cut(line, ",")
		d, err := parseDevice(index, uuid, line)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// csvLines is nvidia-smi's csv,noheader output as its lines, trimmed,
// without empty ones.
func csvLines(out []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// parseDevice checks the index and UUID fields of line.
func parseDevice(index, uuid, line string) (Device, error) {
	d := Device{Index: strings.TrimSpace(index), UUID: strings.TrimSpace(uuid)}
	if _, err := strconv.Atoi(d.Index); err != nil || !validDevice(d.Index) || !strings.HasPrefix(d.UUID, "GPU-") {
		return Device{}, fmt.Errorf("nvidia-smi: unexpected line %q, want a device index and UUID", line)
	}
	return d, nil
}

// checkPresent rejects, all at once, the devices that nvidia-smi does not
// list: CUDA would start the build with no GPU at all, and it would fail
// late and obscurely. A UUID may be a prefix, as CUDA_VISIBLE_DEVICES allows.
// When nvidia-smi cannot list the devices (no driver, not installed) nothing
// is checked and the driver decides; MIG instances are not listed by
// --query-gpu, so they are not checked either.
func checkPresent(spec string, devs []string, probe Probe) error {
	present, err := probe()
	if err != nil {
		return nil
	}
	var missing []string
	for _, d := range devs {
		found := strings.HasPrefix(d, "MIG-") || slices.ContainsFunc(present, func(p Device) bool {
			return p.Index == d || strings.HasPrefix(d, "GPU-") && strings.HasPrefix(p.UUID, d)
		})
		if !found {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	listed := "none"
	if len(present) > 0 {
		names := make([]string, len(present))
		for i, p := range present {
			names[i] = p.String()
		}
		listed = strings.Join(names, ", ")
	}
	noun := "device"
	if len(missing) > 1 {
		noun = "devices"
	}
	return fmt.Errorf("--gpus %q: no %s %s on this machine; nvidia-smi lists %s", spec, noun, strings.Join(missing, ", "), listed)
}

// once makes probe run at most once: nvidia-smi takes a while.
func once(probe Probe) Probe {
	var (
		o    sync.Once
		devs []Device
		err  error
	)
	return func() ([]Device, error) {
		o.Do(func() { devs, err = probe() })
		return devs, err
	}
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

// Devices are the pool's devices, in order.
func (p *Pool) Devices() []string { return slices.Clone(p.devices) }

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
// returned unchanged. Either way, a device nvidia-smi does not list is an
// error (see checkPresent).
func WithinVisible(spec, visible string, probe Probe) ([]string, error) {
	probe = once(probe)
	var entries []string
	for _, e := range strings.Split(visible, ",") {
		if e = strings.TrimSpace(e); e != "" {
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		devs, err := parse(spec, probe)
		if err != nil {
			return nil, err
		}
		return devs, checkPresent(spec, devs, probe)
	}
	devs, err := parse(spec, func() ([]Device, error) {
		idx := make([]Device, len(entries))
		for i := range entries {
			idx[i] = Device{Index: strconv.Itoa(i)}
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
	return devs, checkPresent(spec, devs, probe)
}
