package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestExternalDataOfARealModel reads the model make-external.py wrote with
// the onnx package: external tensors in a graph initializer, a Constant
// node's attribute, an If branch's initializer, a sparse initializer and a
// function's node.
func TestExternalDataOfARealModel(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "external", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ExternalData(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"const.bin", "function.bin", "sparse.bin", "sub/then.bin", "weights.bin"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("externalData = %q, want %q", got, want)
	}
}

// ExternalFiles names the files where the parser reads them: beside the
// model, whatever folder the model is named from.
func TestExternalFilesAreBesideTheModel(t *testing.T) {
	model := filepath.Join("testdata", "external", "model.onnx")
	got, err := ExternalFiles(model)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "external")
	want := []string{filepath.Join(dir, "const.bin"), filepath.Join(dir, "function.bin"), filepath.Join(dir, "sparse.bin"),
		filepath.Join(dir, "sub", "then.bin"), filepath.Join(dir, "weights.bin")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExternalFiles = %q, want %q", got, want)
	}
	if _, err := ExternalFiles(filepath.Join("testdata", "absent.onnx")); err == nil {
		t.Error("no error for a model that is not there")
	}
}

// Builders for hand-made models.
func msg(fields ...[]byte) []byte { return concat(fields...) }

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func bytesField(num protowire.Number, body []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, body)
}

func varintField(num protowire.Number, v uint64) []byte {
	b := protowire.AppendTag(nil, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func entry(key, value string) []byte {
	return bytesField(tensorExternalData, msg(bytesField(entryKey, []byte(key)), bytesField(entryValue, []byte(value))))
}

func externalTensor(name, location string) []byte {
	return msg(bytesField(tensorName, []byte(name)), varintField(tensorDataLocation, dataLocationExternal),
		entry("offset", "0"), entry(externalLocationKeyName, location))
}

func modelWithInitializers(tensors ...[]byte) []byte {
	var graph []byte
	for _, t := range tensors {
		graph = append(graph, bytesField(graphInitializer, t)...)
	}
	return msg(varintField(1, 8), bytesField(modelGraph, graph))
}

func TestExternalDataCases(t *testing.T) {
	inline := msg(bytesField(tensorName, []byte("b")), bytesField(9, []byte{1, 2, 3, 4}))
	// A location entry without data_location EXTERNAL is not external:
	// the parser reads raw_data then.
	notMarked := msg(bytesField(tensorName, []byte("c")), entry(externalLocationKeyName, "ignored.bin"))
	got, err := ExternalData(modelWithInitializers(externalTensor("a", "w.bin"), inline, notMarked, externalTensor("d", "w.bin")))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"w.bin"}) {
		t.Errorf("got %q, want [w.bin] once", got)
	}

	noLocation := msg(bytesField(tensorName, []byte("lost")), varintField(tensorDataLocation, dataLocationExternal))
	_, err = ExternalData(modelWithInitializers(noLocation))
	if err == nil || !strings.Contains(err.Error(), `tensor "lost"`) {
		t.Errorf("a tensor without a location: error %v, want one naming it", err)
	}

	graph := bytesField(graphInitializer, externalTensor("deep", "deep.bin"))
	got, err = ExternalData(msg(bytesField(modelGraph, bytesField(graphNode, bytesField(nodeAttribute, bytesField(attrGraph, graph))))))
	if err != nil || !reflect.DeepEqual(got, []string{"deep.bin"}) {
		t.Errorf("a subgraph's initializer: got %q, %v", got, err)
	}
	for range maxNesting {
		graph = bytesField(graphNode, bytesField(nodeAttribute, bytesField(attrGraph, graph)))
	}
	_, err = ExternalData(msg(bytesField(modelGraph, graph)))
	if !errors.Is(err, errMalformedModel) {
		t.Errorf("nesting beyond %d: error %v, want errMalformedModel", maxNesting, err)
	}

	for name, bad := range map[string][]byte{
		"truncated length":      {0x3a, 0x10, 0x01},
		"bad tag":               {0x00},
		"graph as a varint":     varintField(modelGraph, 1),
		"truncated varint":      {0x08, 0x80},
		"tensor of wrong kind":  bytesField(modelGraph, varintField(graphInitializer, 3)),
		"end group without one": {0x0c},
	} {
		if _, err := ExternalData(bad); !errors.Is(err, errMalformedModel) {
			t.Errorf("%s: error %v, want errMalformedModel", name, err)
		}
	}
}

// FuzzExternalData: no input makes the walker panic, and what it returns
// is either a sorted list of distinct non-empty locations or an error.
func FuzzExternalData(f *testing.F) {
	real, err := os.ReadFile(filepath.Join("testdata", "external", "model.onnx"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	f.Add(modelWithInitializers(externalTensor("a", "w.bin")))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ExternalData(data)
		if err != nil {
			return
		}
		for i, loc := range got {
			if loc == "" || (i > 0 && got[i-1] >= loc) {
				t.Fatalf("locations %q: empty, unsorted or repeated", got)
			}
		}
	})
}
