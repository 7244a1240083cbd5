package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/trt-action/trt-action/internal/onnx"
)

// Hasher computes keys for one run. It remembers each file's SHA-256 (and
// each model's external-data locations) by device, inode, size and
// modification time, so a hundred builds of one model read it once, and a
// file changed in between is read again.
type Hasher struct {
	mu        sync.Mutex
	sums      map[fileID]string
	models    map[fileID]modelFacts
	libraries map[libraryQuery]libraryAnswer
	programs  map[programQuery]programFacts // what builds with run: run (scriptkey.go)
}

// modelFacts is what one read of an ONNX file yields.
type modelFacts struct {
	sum       string
	locations []string // external-data locations, sorted, each once
}

// fileID tells a file's version apart without reading it.
type fileID struct {
	dev, ino uint64
	size     int64
	mtimeNs  int64
}

// NewHasher returns a Hasher with nothing remembered.
func NewHasher() *Hasher {
	return &Hasher{sums: map[fileID]string{}, models: map[fileID]modelFacts{}, libraries: map[libraryQuery]libraryAnswer{},
		programs: map[programQuery]programFacts{}}
}

// identify stats path (following links: the content is what counts).
func identify(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, describeOpenError(path, err)
	}
	if !fi.Mode().IsRegular() {
		return fileID{}, fmt.Errorf("%s is not a regular file", path)
	}
	id := fileID{size: fi.Size(), mtimeNs: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), st.Ino
	}
	return id, nil
}

// describeOpenError keeps "not found" short and names the file.
func describeOpenError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file %s not found", path)
	}
	return err
}

// file returns the SHA-256 of path's content.
func (h *Hasher) file(ctx context.Context, path string) (string, error) {
	id, err := identify(path)
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	sum, ok := h.sums[id]
	h.mu.Unlock()
	if ok {
		return sum, nil
	}
	if sum, err = hashFile(ctx, path); err != nil {
		return "", err
	}
	h.mu.Lock()
	h.sums[id] = sum
	h.mu.Unlock()
	return sum, nil
}

// hashChunk is how much is hashed between two looks at the context: a
// few milliseconds of SHA-256, so a budget or a signal stops the hashing
// of a model of gigabytes at once.
const hashChunk = 8 << 20

// stopped is the error of hashing that ctx ended: its cause (a signal, a
// budget), so the caller can tell it from a file it could not read.
func stopped(ctx context.Context, path string) error {
	return fmt.Errorf("reading %s stopped: %w", path, context.Cause(ctx))
}

// hashFile is the SHA-256 of path's content, in hex.
func hashFile(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", describeOpenError(path, err)
	}
	defer f.Close()
	d := sha256.New()
	buf := make([]byte, 1<<20)
	for done := 0; ; {
		if done >= hashChunk {
			if ctx.Err() != nil {
				return "", stopped(ctx, path)
			}
			done = 0
		}
		n, err := f.Read(buf)
		d.Write(buf[:n])
		done += n
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", path, err)
		}
	}
	return hex.EncodeToString(d.Sum(nil)), nil
}

// onnx returns the model's SHA-256 and its external-data locations, from
// one read of the file.
func (h *Hasher) onnx(ctx context.Context, path string) (string, []string, error) {
	id, err := identify(path)
	if err != nil {
		return "", nil, fmt.Errorf("model %s: %w", path, err)
	}
	h.mu.Lock()
	facts, ok := h.models[id]
	h.mu.Unlock()
	if ok {
		return facts.sum, facts.locations, nil
	}
	err = onnx.Map(path, func(data []byte) error {
		var err error
		facts, err = readModel(ctx, data)
		return err
	})
	if err != nil && ctx.Err() != nil {
		return "", nil, fmt.Errorf("model %s: %w", path, stopped(ctx, path))
	}
	if err != nil {
		return "", nil, fmt.Errorf("model %s: %w", path, err)
	}
	h.mu.Lock()
	h.models[id] = facts
	h.mu.Unlock()
	return facts.sum, facts.locations, nil
}

// readModel hashes and walks a mapped model (onnx.Map), looking at ctx
// between chunks.
func readModel(ctx context.Context, data []byte) (modelFacts, error) {
	d := sha256.New()
	for rest := data; len(rest) > 0; {
		if ctx.Err() != nil {
			return modelFacts{}, context.Cause(ctx)
		}
		n := min(len(rest), hashChunk)
		d.Write(rest[:n])
		rest = rest[n:]
	}
	locations, err := onnx.ExternalData(data)
	return modelFacts{sum: hex.EncodeToString(d.Sum(nil)), locations: locations}, err
}
