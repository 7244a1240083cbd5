// Package onnx reads the little of an ONNX model trt-action needs without
// TensorRT: the files its tensors keep their data in (external data). The
// engine cache keys a model by them, and a run refuses to write over them.
package onnx

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// The ONNX model's external data: tensors whose bytes live in other files,
// named by a location relative to the model's folder. Only the few fields
// that can hold a tensor are walked (field numbers from onnx.proto); the
// rest of the model is never decoded.

// Field numbers of onnx.proto, by message.
const (
	modelGraph     = 7  // ModelProto.graph
	modelFunctions = 25 // ModelProto.functions

	graphNode               = 1  // GraphProto.node
	graphInitializer        = 5  // GraphProto.initializer
	graphSparseInitializer  = 15 // GraphProto.sparse_initializer
	nodeAttribute           = 5  // NodeProto.attribute
	attrTensor              = 5  // AttributeProto.t
	attrGraph               = 6  // AttributeProto.g
	attrTensors             = 10 // AttributeProto.tensors
	attrGraphs              = 11 // AttributeProto.graphs
	attrSparseTensor        = 22 // AttributeProto.sparse_tensor
	attrSparseTensors       = 23 // AttributeProto.sparse_tensors
	sparseValues            = 1  // SparseTensorProto.values
	sparseIndices           = 2  // SparseTensorProto.indices
	functionNode            = 7  // FunctionProto.node
	functionAttributeProto  = 11 // FunctionProto.attribute_proto (defaults)
	tensorName              = 8  // TensorProto.name
	tensorExternalData      = 13 // TensorProto.external_data
	tensorDataLocation      = 14 // TensorProto.data_location
	entryKey                = 1  // StringStringEntryProto.key
	entryValue              = 2  // StringStringEntryProto.value
	dataLocationExternal    = 1  // TensorProto.DataLocation.EXTERNAL
	maxNesting              = 64 // subgraphs deeper than this are refused, not walked
	externalLocationKeyName = "location"
)

// errMalformedModel is returned for a model whose protobuf does not parse.
var errMalformedModel = errors.New("not a valid ONNX model (protobuf)")

// ExternalData lists the external-data locations a serialized ModelProto
// references, sorted, each once: every tensor with data_location EXTERNAL
// in the graph's initializers and sparse initializers, in node attributes
// (tensors, and subgraphs at any depth) and in functions. A malformed
// model is an error wrapping errMalformedModel; it never panics.
func ExternalData(model []byte) ([]string, error) {
	w := &onnxWalker{seen: map[string]bool{}}
	err := w.message(model, 0, w.model)
	if err != nil {
		return nil, err
	}
	slices.Sort(w.locations)
	return w.locations, nil
}

type onnxWalker struct {
	locations []string
	seen      map[string]bool
}

// field is one field of a message: its number and wire type, and its
// bytes (length-delimited) or value (varint).
type field struct {
	num    protowire.Number
	typ    protowire.Type
	body   []byte
	varint uint64
}

// fieldFunc handles one field of a message at a nesting depth.
type fieldFunc func(f field, depth int) error

// message calls each for every field of the message in b.
func (w *onnxWalker) message(b []byte, depth int, each fieldFunc) error {
	if depth > maxNesting {
		return fmt.Errorf("%w: nested more than %d deep", errMalformedModel, maxNesting)
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %v", errMalformedModel, protowire.ParseError(n))
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.BytesType:
			f.body, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			f.varint, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: %v", errMalformedModel, protowire.ParseError(n))
		}
		if err := each(f, depth); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// sub walks a length-delimited field as a message of its own.
func (w *onnxWalker) sub(f field, depth int, each fieldFunc) error {
	if f.typ != protowire.BytesType {
		return fmt.Errorf("%w: field %d, a message, has wire type %d", errMalformedModel, f.num, f.typ)
	}
	return w.message(f.body, depth+1, each)
}

func (w *onnxWalker) model(f field, depth int) error {
	switch f.num {
	case modelGraph:
		return w.sub(f, depth, w.graph)
	case modelFunctions:
		return w.sub(f, depth, w.function)
	}
	return nil
}

func (w *onnxWalker) graph(f field, depth int) error {
	switch f.num {
	case graphNode:
		return w.sub(f, depth, w.node)
	case graphInitializer:
		return w.tensor(f, depth)
	case graphSparseInitializer:
		return w.sub(f, depth, w.sparse)
	}
	return nil
}

func (w *onnxWalker) function(f field, depth int) error {
	switch f.num {
	case functionNode:
		return w.sub(f, depth, w.node)
	case functionAttributeProto:
		return w.sub(f, depth, w.attribute)
	}
	return nil
}

func (w *onnxWalker) node(f field, depth int) error {
	if f.num == nodeAttribute {
		return w.sub(f, depth, w.attribute)
	}
	return nil
}

func (w *onnxWalker) attribute(f field, depth int) error {
	switch f.num {
	case attrTensor, attrTensors:
		return w.tensor(f, depth)
	case attrGraph, attrGraphs:
		return w.sub(f, depth, w.graph)
	case attrSparseTensor, attrSparseTensors:
		return w.sub(f, depth, w.sparse)
	}
	return nil
}

func (w *onnxWalker) sparse(f field, depth int) error {
	if f.num == sparseValues || f.num == sparseIndices {
		return w.tensor(f, depth)
	}
	return nil
}

// tensor records the location of a TensorProto whose data is external.
func (w *onnxWalker) tensor(t field, depth int) error {
	var name, location string
	external, hasLocation := false, false
	err := w.sub(t, depth, func(f field, depth int) error {
		switch f.num {
		case tensorName:
			name = string(f.body)
		case tensorDataLocation:
			external = f.typ == protowire.VarintType && f.varint == dataLocationExternal
		case tensorExternalData:
			key, value, err := w.entry(f, depth)
			if err != nil {
				return err
			}
			if key == externalLocationKeyName {
				location, hasLocation = value, true
			}
		}
		return nil
	})
	if err != nil || !external {
		return err
	}
	if !hasLocation || location == "" {
		return fmt.Errorf("tensor %q keeps its data in an external file but names none (no %q entry)", name, externalLocationKeyName)
	}
	if !w.seen[location] {
		w.seen[location] = true
		w.locations = append(w.locations, location)
	}
	return nil
}

// entry reads a StringStringEntryProto.
func (w *onnxWalker) entry(e field, depth int) (key, value string, err error) {
	err = w.sub(e, depth, func(f field, _ int) error {
		switch f.num {
		case entryKey:
			key = string(f.body)
		case entryValue:
			value = string(f.body)
		}
		return nil
	})
	return key, value, err
}

// ExternalPath is where the ONNX parser looks for an external-data file:
// the location joined to the model's folder (onnx-tensorrt appends it to
// the folder even when it starts with "/").
func ExternalPath(model, location string) string {
	return filepath.Join(filepath.Dir(model), location)
}
