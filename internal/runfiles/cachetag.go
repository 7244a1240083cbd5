package runfiles

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
)

// A cache folder is tagged as the Cache Directory Tagging Specification
// says (https://bford.info/cachedir/): a file CACHEDIR.TAG in it that
// starts with the signature below. The engine cache folder is one
// (internal/cache writes the tag), and so are the caches of other tools
// that follow the specification. Backup and archive tools leave such a
// folder out (tar --exclude-caches), and so does Glob: what is in a cache
// changes with every run that fills it, so it can never be an input that
// decides an engine (a key that read the engine cache folder would change
// with every entry stored in it, and no run would ever hit).

// CacheTagName is the tag's file name.
const CacheTagName = "CACHEDIR.TAG"

// cacheTagSignature is what a tag starts with.
const cacheTagSignature = "Signature: 8a477f597d28d172789f06886806bc55"

// CacheTag is the content of the tag trt-action writes.
var CacheTag = []byte(cacheTagSignature + "\n" +
	"# This file is a cache directory tag created by trt-action: this folder is its engine cache.\n" +
	"# For information about cache directory tags, see https://bford.info/cachedir/\n")

// IsCacheFolder reports whether dir holds a cache directory tag: a
// regular file (a link there is no tag) that starts with the signature.
func IsCacheFolder(dir string) bool {
	p := filepath.Join(dir, CacheTagName)
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(cacheTagSignature))
	_, err = io.ReadFull(f, head)
	return err == nil && bytes.Equal(head, []byte(cacheTagSignature))
}

// IsCacheTag reports whether b, a tag file's content, is a tag.
func IsCacheTag(b []byte) bool { return bytes.HasPrefix(b, []byte(cacheTagSignature)) }
