package cache

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/onnx"
	"github.com/trt-action/trt-action/internal/settings"
)

// What went into a key (cache key --explain): the document Key hashes
// (keyDoc, the one home of what a key is made of), read back part by
// part, so a part added to the key shows here with no change. Two runners
// whose keys differ compare these lines to see why: a library build-id, a
// GPU, a setting, a model.

// KeyPart is one part of a build's key.
type KeyPart struct {
	// Name is where the part sits in the key: "backend", "library",
	// "model.sha256", "settings.precision", "sim.step_ns",
	// "script.inputs.build.py", "script.program.python.distributions.numpy".
	Name string `json:"name"`
	// Value is the part as the key holds it: a string as it is, a number
	// or a list as JSON.
	Value string `json:"value"`
	// File is the file whose content the part is the SHA-256 of (the
	// model, its external data, a plugin, a calibration cache, a trace),
	// as the matrix names it; "" for a part that is no file's.
	File string `json:"file,omitempty"`
}

// Explain is b's key, as Key computes it, and the parts it was made from,
// in the key's order.
func (h *Hasher) Explain(ctx context.Context, b matrix.Build, env Env) (Key, []KeyPart, error) {
	data, scriptFiles, err := h.document(ctx, b, env)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(append([]byte(keySalt), data...))
	var parts []KeyPart
	if err := flatten(json.NewDecoder(bytes.NewReader(data)), "", &parts); err != nil {
		return "", nil, fmt.Errorf("build %s: cannot read its key back: %w", b.Name, err)
	}
	files := h.fileParts(ctx, b)
	for i := range parts {
		parts[i].File = cmp.Or(files[parts[i].Name], scriptFiles[parts[i].Name])
	}
	return Key(hex.EncodeToString(sum[:])), parts, nil
}

// flatten reads one JSON value from dec into parts, named from name: an
// object's members each under "name.member", anything else as one part.
func flatten(dec *json.Decoder, name string, parts *[]KeyPart) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if len(raw) == 0 || raw[0] != '{' {
		value := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			value = s
		}
		*parts = append(*parts, KeyPart{Name: name, Value: value})
		return nil
	}
	obj := json.NewDecoder(bytes.NewReader(raw))
	if _, err := obj.Token(); err != nil { // {
		return err
	}
	for obj.More() {
		tok, err := obj.Token()
		if err != nil {
			return err
		}
		member := tok.(string)
		if name != "" {
			member = name + "." + member
		}
		if err := flatten(obj, member, parts); err != nil {
			return err
		}
	}
	return nil
}

// fileParts names, by part, the files of b (a build without run:) whose
// content a part of its key is: keyDoc's model and its external data (the
// model's read is the one Key made, remembered), file-valued settings
// (settings.IsFile) and the simulator's trace. A build with run:'s are
// named as its key is made (scriptkey.go).
func (h *Hasher) fileParts(ctx context.Context, b matrix.Build) map[string]string {
	out := map[string]string{}
	if b.ONNX != "" {
		out["model.sha256"] = b.ONNX
		if _, locations, err := h.onnx(ctx, b.ONNX); err == nil {
			for _, loc := range locations {
				out["model.external."+loc] = onnx.ExternalPath(b.ONNX, loc)
			}
		}
	}
	for key, v := range b.BuilderSettings() {
		if !settings.IsFile(key) {
			continue
		}
		switch v := v.(type) {
		case string:
			out["settings."+key] = v
		case []string:
			out["settings."+key] = strings.Join(v, ", ")
		}
	}
	if b.Sim.Trace != "" {
		out["sim.trace"] = b.Sim.Trace
	}
	return out
}
