package onnx

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
)

// Map maps the file at path read-only and calls use with its bytes, so a
// model of gigabytes is hashed and walked without copying it onto the
// heap. A file truncated by someone else while it is mapped faults on
// access; that becomes an error here rather than a crash of the run. The
// bytes are valid only during use.
func Map(path string, use func(data []byte) error) (err error) {
	data, release, err := mapFile(path)
	if err != nil {
		return err
	}
	defer release()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the file changed while it was read: %v", r)
		}
	}()
	return use(data)
}

// ExternalFiles is the paths of the external-data files of the model at
// path, sorted by location, each once: where the ONNX parser will read
// them (ExternalPath).
func ExternalFiles(path string) ([]string, error) {
	var files []string
	err := Map(path, func(data []byte) error {
		locations, err := ExternalData(data)
		for _, loc := range locations {
			files = append(files, ExternalPath(path, loc))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	return files, nil
}

func mapFile(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() == 0 {
		return nil, func() {}, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
