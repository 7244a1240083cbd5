package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"regexp"

	"github.com/trt-action/trt-action/internal/text"
)

// verifier passes on the bytes of r that a store's records say are size
// bytes with the SHA-256 sum, and fails with ErrCorrupt where they are
// not: at the byte past size (which it never passes on), and at the end of
// a stream that is shorter or hashes to another sum, in place of io.EOF.
// An error of r itself (a connection cut) is passed on as it is: never a
// silent short read.
type verifier struct {
	r    io.Reader
	what string // what is read, for messages: "engine", "blob sha256:ab…"
	size int64
	sum  string
	h    hash.Hash
	n    int64
	err  error // sticky
}

func newVerifier(r io.Reader, what string, size int64, sum string) *verifier {
	return &verifier{r: r, what: what, size: size, sum: sum, h: sha256.New()}
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	if left := v.size - v.n + 1; int64(len(p)) > left {
		p = p[:left] // one byte past size is enough to know there is more
	}
	n, err := v.r.Read(p)
	if v.n+int64(n) > v.size {
		n = int(v.size - v.n)
		v.err = corrupt("%s: the store served more than the %d bytes its records name", v.what, v.size)
		err = v.err
	}
	v.h.Write(p[:n])
	v.n += int64(n)
	switch {
	case err == io.EOF && v.n != v.size:
		v.err = corrupt("%s: the store served %d bytes, not the %d its records name", v.what, v.n, v.size)
		err = v.err
	case err == io.EOF:
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.sum {
			v.err = corrupt("%s: the bytes the store served have SHA-256 %s, not the %s its records name", v.what, got, v.sum)
			err = v.err
		}
	case err != nil:
		v.err = err
	}
	return n, err
}

// namedReader passes r's errors (but io.EOF) through name, which says
// whose they are.
type namedReader struct {
	io.ReadCloser
	name func(error) error
}

func (r namedReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = r.name(err)
	}
	return n, err
}

// readCloser is a reader with another's Close.
type readCloser struct {
	io.Reader
	io.Closer
}

// cutError is an error in parsing what a store served, cut short:
// encoding/json quotes what it did not expect (an unknown field's name).
func cutError(err error) string { return text.CutRunes(err.Error(), 200) }

// corrupt is an error wrapping ErrCorrupt.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// readVerified reads all of r, which a store's records say is size bytes
// (at most limit) with the SHA-256 sum.
func readVerified(r io.Reader, what string, size int64, sum string, limit int64) ([]byte, error) {
	if size > limit {
		return nil, corrupt("%s: %d bytes, more than the %d allowed, refused unread", what, size, limit)
	}
	return io.ReadAll(newVerifier(r, what, size, sum))
}

var (
	hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// validKey reports whether key is a cache key: 64 lowercase hex digits.
func validKey(key string) bool { return hexSHA256.MatchString(key) }

// checkKey is the error of a method given a key that is not one: the
// caller's mistake, never the store's.
func checkKey(key string) error {
	if !validKey(key) {
		return fmt.Errorf("%q is not a cache key (64 lowercase hex digits)", key)
	}
	return nil
}

// checkUploads checks what Put was given: a metadata file within
// MaxMetaBytes, and files with distinct names, sizes and SHA-256 digests.
func checkUploads(key string, meta []byte, files []Upload) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if len(meta) > MaxMetaBytes {
		return fmt.Errorf("metadata of %d bytes, more than the %d a store takes", len(meta), MaxMetaBytes)
	}
	if len(files) == 0 {
		return fmt.Errorf("an entry without files")
	}
	seen := map[string]bool{}
	for _, f := range files {
		switch {
		case f.Name == "" || seen[f.Name]:
			return fmt.Errorf("file name %q is empty or repeated", f.Name)
		case f.Size < 0 || !hexSHA256.MatchString(f.SHA256):
			return fmt.Errorf("file %q: size %d or SHA-256 %q is not one", f.Name, f.Size, f.SHA256)
		case f.Body == nil:
			return fmt.Errorf("file %q has no body", f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}

// checkFiles checks the files a store's records name, as Get returns them:
// what checkUploads asks of a Put's, or the entry is corrupt.
func checkFiles(files []File) error {
	if len(files) == 0 {
		return corrupt("the entry names no files")
	}
	seen := map[string]bool{}
	for _, f := range files {
		switch {
		case f.Name == "" || seen[f.Name]:
			return corrupt("file name %s is empty or repeated", text.QuotedCut(f.Name))
		case f.Size < 0 || !hexSHA256.MatchString(f.SHA256):
			return corrupt("file %s: size %d or SHA-256 %s is not one", text.QuotedCut(f.Name), f.Size, text.QuotedCut(f.SHA256))
		}
		seen[f.Name] = true
	}
	return nil
}
