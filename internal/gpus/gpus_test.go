package gpus

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProbe lists devices with the given indexes, each with UUID
// GPU-<index>-uuid.
func fakeProbe(indexes ...string) Probe {
	return func() ([]Device, error) {
		devs := make([]Device, len(indexes))
		for i, x := range indexes {
			devs[i] = Device{Index: x, UUID: "GPU-" + x + "-uuid"}
		}
		return devs, nil
	}
}

func noProbe(t *testing.T) Probe {
	return func() ([]Device, error) {
		t.Error("probe must not run for an explicit list")
		return nil, nil
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		spec    string
		probe   Probe
		want    []string
		wantErr string
	}{
		{spec: "", probe: noProbe(t), want: nil},
		{spec: "all", probe: fakeProbe("0", "1", "2"), want: []string{"0", "1", "2"}},
		{spec: " 0, 1,3 ", probe: noProbe(t), want: []string{"0", "1", "3"}},
		{spec: "GPU-5e1c2a,MIG-abc", probe: noProbe(t), want: []string{"GPU-5e1c2a", "MIG-abc"}},
		{spec: "all", probe: fakeProbe(), wantErr: "no GPU found"},
		{spec: "all", probe: func() ([]Device, error) { return nil, errors.New("nvidia-smi: not found") }, wantErr: "not found"},
		{spec: "0,0", probe: noProbe(t), wantErr: "listed twice"},
		{spec: "0,x", probe: noProbe(t), wantErr: `"x" is not a device`},
		{spec: "-1", probe: noProbe(t), wantErr: "not a device"},
		{spec: "01", probe: noProbe(t), wantErr: "not a device"},
		{spec: "0,", probe: noProbe(t), wantErr: `"" is not a device`},
		{spec: "GPU-", probe: noProbe(t), wantErr: "not a device"},
		{spec: " ", probe: noProbe(t), wantErr: `--gpus " ": no device given; use all, or indexes`},
	}
	for _, c := range cases {
		got, err := parse(c.spec, c.probe)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("parse(%q) err = %v, want %q", c.spec, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("parse(%q) = %q, %v; want %q", c.spec, got, err, c.want)
		}
	}
}

func TestParseDeviceList(t *testing.T) {
	got, err := parseDeviceList([]byte("0, GPU-aaa\n1, GPU-bbb\n\n 2 , GPU-ccc \n"))
	want := []Device{{"0", "GPU-aaa"}, {"1", "GPU-bbb"}, {"2", "GPU-ccc"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parseDeviceList = %q, %v", got, err)
	}
	for _, bad := range []string{"NVIDIA-SMI has failed\n", "0\n", "x, GPU-a\n"} {
		if _, err := parseDeviceList([]byte(bad)); err == nil {
			t.Errorf("%q should be an error", bad)
		}
	}
}

func TestPoolSpreadsBeforeSharing(t *testing.T) {
	p := NewPool([]string{"0", "1", "2"}, 2)
	ctx := context.Background()
	var got []string
	var releases []func()
	for range 6 {
		d, rel, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
		releases = append(releases, rel)
	}
	if want := []string{"0", "1", "2", "0", "1", "2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("assignment order = %q, want %q", got, want)
	}
	releases[1]() // a slot on GPU 1 frees up
	releases[1]() // releasing twice must not free a second slot
	d, _, err := p.Acquire(ctx)
	if err != nil || d != "1" {
		t.Errorf("after releasing GPU 1, got %q, %v", d, err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, _, err := p.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("full pool: err = %v, want deadline exceeded", err)
	}
}

func TestPoolBlocksUntilFree(t *testing.T) {
	p := NewPool([]string{"7"}, 1)
	_, release, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		d, _, _ := p.Acquire(context.Background())
		got <- d
	}()
	select {
	case d := <-got:
		t.Fatalf("second Acquire returned %q while the GPU was busy", d)
	case <-time.After(30 * time.Millisecond):
	}
	release()
	select {
	case d := <-got:
		if d != "7" {
			t.Errorf("got %q", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Acquire did not wake up after release")
	}
}

func TestPoolNeverExceedsPerDevice(t *testing.T) {
	const perDevice = 2
	p := NewPool([]string{"0", "1"}, perDevice)
	var mu sync.Mutex
	running := map[string]int{}
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, release, err := p.Acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			running[d]++
			if running[d] > perDevice {
				t.Errorf("device %s runs %d builds", d, running[d])
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			running[d]--
			mu.Unlock()
			release()
		}()
	}
	wg.Wait()
}

func TestEmptyPool(t *testing.T) {
	if _, _, err := NewPool(nil, 1).Acquire(context.Background()); err == nil {
		t.Error("an empty pool must not block forever")
	}
	if Env("3") != "CUDA_VISIBLE_DEVICES=3" {
		t.Error(Env("3"))
	}
}

func TestWithinVisibleMapsIndexesToTheInheritedDevices(t *testing.T) {
	// nvidia-smi cannot tell here: the inherited list is taken as it is.
	noProbe := func() ([]Device, error) { return nil, errors.New("nvidia-smi: not found") }
	cases := []struct {
		spec, visible string
		want          []string
		err           string
	}{
		{"all", "2,3", []string{"2", "3"}, ""},
		{"1", "2,3", []string{"3"}, ""},
		{"0,1", "GPU-aaa, GPU-bbb", []string{"GPU-aaa", "GPU-bbb"}, ""},
		{"2", "2,3", nil, "not among the 2 visible"},
	}
	for _, c := range cases {
		got, err := WithinVisible(c.spec, c.visible, noProbe)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s within %s: error %v, want %q", c.spec, c.visible, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s within %s = %v, %v; want %v", c.spec, c.visible, got, err, c.want)
		}
	}
	got, err := WithinVisible("all", "", fakeProbe("0", "1"))
	if err != nil || strings.Join(got, ",") != "0,1" {
		t.Errorf("nothing inherited: %v %v, want nvidia-smi's list", got, err)
	}
}

func TestDevicesNvidiaSMIDoesNotListAreAnError(t *testing.T) {
	probe := fakeProbe("0", "1")
	for _, c := range []struct {
		spec, visible string
		want          []string
		err           string
	}{
		{"0,1", "", []string{"0", "1"}, ""},
		{"GPU-1-uuid,GPU-0", "", []string{"GPU-1-uuid", "GPU-0"}, ""}, // a UUID prefix names a device too
		{"MIG-abc", "", []string{"MIG-abc"}, ""},                      // not listed by --query-gpu; not checked
		{"0,7", "", nil, `--gpus "0,7": no device 7 on this machine; nvidia-smi lists 0 (GPU-0-uuid), 1 (GPU-1-uuid)`},
		{"7,GPU-zzz", "", nil, `no devices 7, GPU-zzz on this machine`},
		{"1", "0,5", nil, `--gpus "1": no device 5 on this machine`}, // the inherited list names a device that is not there
		{"0", "1,0", []string{"1"}, ""},
	} {
		got, err := WithinVisible(c.spec, c.visible, probe)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("--gpus %s (visible %q): error %v, want %q", c.spec, c.visible, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("--gpus %s (visible %q) = %v, %v; want %v", c.spec, c.visible, got, err, c.want)
		}
	}
	if _, err := WithinVisible("0", "", func() ([]Device, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "nvidia-smi lists none") {
		t.Errorf("no device listed: %v", err)
	}
}

// TestNvidiaSMIOnPath runs a fake nvidia-smi, as the real one would be run.
func TestNvidiaSMIOnPath(t *testing.T) {
	fakeNvidiaSMI(t, "#!/bin/sh\n[ \"$*\" = \"--query-gpu=index,uuid --format=csv,noheader\" ] || exit 9\nprintf '0, GPU-5e1c2a00-0000\\n1, GPU-77aa0000-0001\\n'\n")
	_, err := WithinVisible("0,7", "", NvidiaSMI)
	if want := `--gpus "0,7": no device 7 on this machine; nvidia-smi lists 0 (GPU-5e1c2a00-0000), 1 (GPU-77aa0000-0001)`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	got, err := WithinVisible("1,GPU-5e1c", "", NvidiaSMI)
	if err != nil || !reflect.DeepEqual(got, []string{"1", "GPU-5e1c"}) {
		t.Errorf("present devices = %v, %v", got, err)
	}
}

func TestNvidiaSMIThatHangsIsNotWaitedFor(t *testing.T) {
	fakeNvidiaSMI(t, "#!/bin/sh\nsleep 30\n")
	saved := nvidiaSMITimeout
	nvidiaSMITimeout = 100 * time.Millisecond
	defer func() { nvidiaSMITimeout = saved }()

	start := time.Now()
	got, err := WithinVisible("0", "", NvidiaSMI)
	if err != nil || !reflect.DeepEqual(got, []string{"0"}) {
		t.Errorf("explicit list with a hung nvidia-smi = %v, %v; want it taken as it is", got, err)
	}
	if _, err := WithinVisible("all", "", NvidiaSMI); err == nil || !strings.Contains(err.Error(), "no answer in 100ms") {
		t.Errorf("all with a hung nvidia-smi: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s; the 30 s nvidia-smi was waited for", took)
	}
}

func TestNvidiaSMIMissingSaysSo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := parse("all", NvidiaSMI)
	want := "--gpus all: cannot list the GPUs: nvidia-smi is not installed or not on PATH (it comes with the NVIDIA driver); or name the devices (--gpus 0,1)"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// fakeNvidiaSMI puts script first on PATH as nvidia-smi, as the real one
// would be run.
func fakeNvidiaSMI(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
