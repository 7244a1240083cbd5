package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/trt-action/trt-action/internal/atomicfile"
)

// deliver puts a copy of the cache's engine src in a partial file beside
// dest (atomicfile.PartialName, so a killed run's leftover is removed by
// the next) and returns its name and the SHA-256 and size of what it
// holds. A copy, not a hard link: with a link, editing the engine a build
// delivered would change the cache's file, and editing the cache's file
// every engine it delivered. Where the file system can share the blocks
// (FICLONE: btrfs, XFS with reflink, bcachefs) the copy is a reflink,
// which costs neither time nor space until one side is written; elsewhere
// the bytes are copied. The hash is taken of the copy, so what is
// installed is what was checked. dest must be able to take the engine
// (atomicfile.CheckInstall).
func deliver(src *os.File, dest string) (tmp, sum string, size int64, err error) {
	tmp, out, err := openPartial(dest)
	if err != nil {
		return "", "", 0, err
	}
	h := sha256.New()
	if cloneFile(out, src) == nil {
		size, err = io.CopyBuffer(h, out, make([]byte, copyBuffer)) // the clone shares the blocks: this reads what dest will hold
	} else {
		size, err = io.CopyBuffer(io.MultiWriter(out, h), io.NewSectionReader(src, 0, 1<<62), make([]byte, copyBuffer))
	}
	if err == nil {
		err = out.Sync()
	}
	if closeErr := out.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		os.Remove(tmp)
		return "", "", 0, err
	}
	return tmp, hex.EncodeToString(h.Sum(nil)), size, nil
}

// openPartial creates a new partial file beside dest (atomicfile.PartialName)
// for an engine on its way there, once dest is known to be able to take it
// (atomicfile.CheckInstall); its folder is made when missing.
func openPartial(dest string) (string, *os.File, error) {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", nil, err
	}
	if err := atomicfile.CheckInstall(dest); err != nil {
		return "", nil, err
	}
	_, _ = atomicfile.RemoveStale(dest) // best effort, as a build does
	tmp := atomicfile.PartialName(dest)
	out, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", nil, err
	}
	return tmp, out, nil
}

// cloneFile makes dst a reflink of src; an error (EOPNOTSUPP, EXDEV,
// EINVAL) means the file system cannot, and the caller copies.
// A variable, so a test can take the copy path on a file system that
// clones. The clone leaves dst's offset at 0, where the hash reads from.
var cloneFile = cloneOrNot

func cloneOrNot(dst, src *os.File) error {
	return unix.IoctlFileClone(int(dst.Fd()), int(src.Fd()))
}

// copyBuffer is the chunk an engine is copied and hashed in: large reads
// and writes for engines of hundreds of megabytes.
const copyBuffer = 1 << 20
