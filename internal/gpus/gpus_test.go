package gpus

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func fakeProbe(devs ...string) Probe {
	return func() ([]string, error) { return devs, nil }
}

func noProbe(t *testing.T) Probe {
	return func() ([]string, error) {
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
		{spec: "all", probe: func() ([]string, error) { return nil, errors.New("nvidia-smi: not found") }, wantErr: "not found"},
		{spec: "0,0", probe: noProbe(t), wantErr: "listed twice"},
		{spec: "0,x", probe: noProbe(t), wantErr: `"x" is not a device`},
		{spec: "-1", probe: noProbe(t), wantErr: "not a device"},
		{spec: "01", probe: noProbe(t), wantErr: "not a device"},
		{spec: "0,", probe: noProbe(t), wantErr: `"" is not a device`},
		{spec: "GPU-", probe: noProbe(t), wantErr: "not a device"},
		{spec: " ", probe: noProbe(t), wantErr: `--gpus " ": no device given; use all, or indexes`},
	}
	for _, c := range cases {
		got, err := Parse(c.spec, c.probe)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%q) err = %v, want %q", c.spec, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.spec, got, err, c.want)
		}
	}
}

func TestParseIndexList(t *testing.T) {
	got, err := parseIndexList([]byte("0\n1\n\n 2 \n"))
	if err != nil || !reflect.DeepEqual(got, []string{"0", "1", "2"}) {
		t.Errorf("parseIndexList = %q, %v", got, err)
	}
	if _, err := parseIndexList([]byte("NVIDIA-SMI has failed\n")); err == nil {
		t.Error("garbage output should be an error")
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
	noProbe := func() ([]string, error) {
		t.Fatal("nvidia-smi must not be asked when devices are inherited")
		return nil, nil
	}
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
	got, err := WithinVisible("all", "", func() ([]string, error) { return []string{"0", "1"}, nil })
	if err != nil || strings.Join(got, ",") != "0,1" {
		t.Errorf("nothing inherited: %v %v, want nvidia-smi's list", got, err)
	}
}

func TestNvidiaSMIMissingSaysSo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Parse("all", NvidiaSMI)
	want := "--gpus all: cannot list the GPUs: nvidia-smi is not installed or not on PATH (it comes with the NVIDIA driver); or name the devices (--gpus 0,1)"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
