package jsonl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// A run with a shared cache store: cache_transfer lines (a transfer's
// first and last, at most one a second between), cache_pushed for a push
// that outlived its build, the cache object's from, pushed and transfer,
// and run_finished's store.
func TestStreamOfASharedStoreGolden(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{})
	for _, e := range reporttest.SharedEvents(reporttest.Shared(), reporttest.SharedStopped) {
		v.Handle(e)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "stream-shared.jsonl", out.String())
	transfers := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var line struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Direction string `json:"direction"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if line.Type == "cache_transfer" {
			transfers[line.Name+" "+line.Direction]++
		}
	}
	// resnet-fp16's 14.1 s pull, told 57 times: its first line, one a
	// second after, and its last.
	if n := transfers["resnet-fp16 pull"]; n < 15 || n > 16 {
		t.Errorf("%d cache_transfer lines for a 14.1 s pull, want 15 or 16", n)
	}
	for _, want := range []string{
		`"type":"cache_transfer","t_ms":14100,"build":0,"name":"resnet-fp16","direction":"pull","bytes":1234567890,"total":1234567890,"elapsed_ms":14100,"ended":true}`,
		`"type":"cache_transfer","t_ms":38050,"build":4,"name":"vit-b16","direction":"push","bytes":5000000,"total":20000000,"elapsed_ms":3000,"ended":true,"error":"HTTP 503 Service Unavailable after 3 tries"}`,
		`"type":"cache_pushed","t_ms":17300,"build":1,"name":"yolo_v8","pushed":true,"cache":{"key":"` + strings.Repeat("b", 64) + `","hit":false,"stored":true,"pushed":true,"transfer":{"direction":"push","bytes":48000000,"ms":2300}}}`,
		`"cache":{"key":"` + strings.Repeat("e", 64) + `","hit":true,"from":"remote","built_at":"2025-02-27T11:00:00Z","build_ms":2460000,"transfer":{"direction":"pull","bytes":1234567890,"ms":14100}}}`,
		`"cache":{"remote":"oci://ghcr.io/acme/engines","remote_mode":"read-write","warnings":["oci://ghcr.io/acme/engines: HTTP 503`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %s in\n%s", want, out.String())
		}
	}
}

// Builds with run: in the engine cache: a hit's engines and outputs, and
// its key, hit and origin; a build not stored says why (not_stored).
func TestStreamOfCachedScriptsGolden(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{})
	for _, e := range reporttest.SharedEvents(reporttest.CachedScripts(), nil) {
		v.Handle(e)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "stream-cached-scripts.jsonl", out.String())
	for _, want := range []string{
		`"name":"trtllm-llama","status":"cached","duration_ms":9200,"engines":[{"path":"engines/rank0.engine","bytes":2100000000,"sha256":"a0"},{"path":"engines/rank1.engine","bytes":2100000000,"sha256":"a1"}],"outputs":[{"path":"engines/config.json","bytes":6400,"sha256":"c0"}],"cache":{"key":"` + strings.Repeat("f", 64) + `","hit":true,"from":"remote"`,
		`"cache":{"key":"` + strings.Repeat("2", 64) + `","hit":false,"not_stored":"output out/model.json is left from before this build: the command did not write it"}`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %s in\n%s", want, out.String())
		}
	}
}
