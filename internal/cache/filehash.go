package cache

import (
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
	return &Hasher{sums: map[fileID]string{}, models: map[fileID]modelFacts{}, libraries: map[libraryQuery]libraryAnswer{}}
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
func (h *Hasher) file(path string) (string, error) {
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
	if sum, err = hashFile(path); err != nil {
		return "", err
	}
	h.mu.Lock()
	h.sums[id] = sum
	h.mu.Unlock()
	return sum, nil
}

// hashFile is the SHA-256 of path's content, in hex.
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", describeOpenError(path, err)
	}
	defer f.Close()
	d := sha256.New()
	if _, err := io.Copy(d, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(d.Sum(nil)), nil
}

// onnx returns the model's SHA-256 and its external-data locations, from
// one read of the file.
func (h *Hasher) onnx(path string) (string, []string, error) {
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
		sum := sha256.Sum256(data)
		locations, err := onnx.ExternalData(data)
		facts = modelFacts{sum: hex.EncodeToString(sum[:]), locations: locations}
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("model %s: %w", path, err)
	}
	h.mu.Lock()
	h.models[id] = facts
	h.mu.Unlock()
	return facts.sum, facts.locations, nil
}
