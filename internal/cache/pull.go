package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/cache/remote"
)

// Pulled is what Pull did.
type Pulled struct {
	Entry Entry // the entry, as its metadata says
	Transfer
	// Backfilled: the cache folder has the entry now (Kept: another
	// process stored it meanwhile, which is as good); Stored says what
	// that store did.
	Backfilled bool
	Stored     Stored
	// NotKept says why the folder did not take the entry, when it did not:
	// ErrReadOnly, a *tooLargeError (larger than max-size), a full disk.
	// The engine was delivered all the same; the caller warns as for a
	// store that failed.
	NotKept error
}

// Pull takes k's entry from the shared store s, after a miss in the
// folder: its metadata is checked as strictly as a local entry.json's
// (checkRemote), then the engine is streamed once, into a partial file
// beside dest and into a staging folder of the cache in the same pass,
// and hashed. Only when its size and SHA-256 are the metadata's is the
// staged entry installed (as Store installs one: Kept when another
// process stored k meanwhile) and the partial file renamed to dest
// (atomicfile.Install). When the folder cannot take the entry (read-only,
// larger than max-size, a full disk), the engine is still delivered and
// Pulled.NotKept says why.
//
// A hit returns (pulled, true, nil); a miss (the store has no entry for k)
// (zero, false, nil). An entry refused is a *RefusedError, a store that
// failed a *StoreError, a stop of ctx (a budget, a signal) its cause, and
// any other error is dest's or the folder's; after any error nothing of
// the pull is left at dest or in the cache. progress is told of the
// engine's bytes as they come.
func (c *Cache) Pull(ctx context.Context, s remote.Store, k Key, dest string, progress Progress) (Pulled, bool, error) {
	if err := checkKey(k); err != nil {
		return Pulled{}, false, err
	}
	m := newMeter(progress, 0)
	found, err := s.Get(ctx, string(k))
	switch {
	case err == nil:
	case errors.Is(err, remote.ErrNotFound) && ctx.Err() == nil:
		return Pulled{}, false, nil
	default:
		return Pulled{}, false, storeFailed(ctx, k, "look up", err)
	}
	e, err := checkRemote(k, found)
	if err != nil {
		return Pulled{}, false, err
	}
	m.total = e.Size
	p, err := c.receive(ctx, s, found, e, dest, m)
	if err != nil {
		return Pulled{}, false, err
	}
	return p, true, nil
}

// checkRemote checks an entry a store returned for k as readMeta checks a
// local one, and against the store's own records of its files: bounded
// metadata of this format for this key, one file (the engine) whose size
// and SHA-256 the metadata gives too. A refusal is a *RefusedError.
func checkRemote(k Key, found *remote.Entry) (Entry, error) {
	refuse := func(format string, args ...any) (Entry, error) {
		return Entry{}, &RefusedError{Key: k, Reason: fmt.Sprintf(format, args...)}
	}
	if found.Key != string(k) {
		return refuse("the store answered with the entry of key %s", quoted(found.Key))
	}
	if len(found.Meta) > remote.MaxMetaBytes {
		return refuse("its metadata has %d bytes, more than the %d an entry's may have", len(found.Meta), remote.MaxMetaBytes)
	}
	if len(found.Files) != 1 || found.Files[0].Name != engineName {
		names := make([]string, len(found.Files))
		for i, f := range found.Files {
			names[i] = quoted(f.Name)
		}
		return refuse("it has the files %v; an entry of format %d has one, %q", names, FormatVersion, engineName)
	}
	file := found.Files[0]
	if file.Size < 0 || !Key(file.SHA256).Valid() { // a SHA-256 is written as a key is
		return refuse("the store's record of its engine (%d bytes, SHA-256 %s) is not one", file.Size, quoted(file.SHA256))
	}
	m, err := decodeMeta(found.Meta, true)
	if err != nil {
		return refuse("%v", err)
	}
	if !m.Key.Valid() {
		return refuse("its metadata names key %s", quoted(string(m.Key)))
	}
	e, err := checkDecoded(m, found.Uploaded, int64(len(found.Meta)), k, file.Size)
	if err != nil {
		return refuse("%v", err)
	}
	if m.EngineSHA256 != file.SHA256 {
		return refuse("its metadata gives the engine's SHA-256 as %s, the store's record %s", quoted(m.EngineSHA256), file.SHA256)
	}
	return e, nil
}

// receive streams the entry's engine once into a partial file beside dest
// and the backfill's staging folder, checks it, then installs both.
func (c *Cache) receive(ctx context.Context, s remote.Store, found *remote.Entry, e Entry, dest string, m *meter) (Pulled, error) {
	tmp, out, err := openPartial(dest)
	if err != nil {
		return Pulled{}, err
	}
	defer os.Remove(tmp) // gone already once installed
	defer out.Close()    // closed already once complete; a second close does nothing
	p := Pulled{Entry: e}
	bf, err := c.startBackfill(e, dest)
	p.NotKept = err
	defer bf.abandon() // nothing once committed
	body, err := s.Open(ctx, found, 0)
	if err != nil {
		return Pulled{}, storeFailed(ctx, e.Key, "read", err)
	}
	// The store's reader ends when ctx does (its request is ctx's): a
	// signal ends a pull at once. It is not closed from another goroutine
	// meanwhile: readers are not safe for that.
	sum, err := copyPulled(ctx, body, out, bf, e, m)
	body.Close()
	if err != nil {
		return Pulled{}, err
	}
	p.Transfer = m.end()
	if reason := mismatch(sum, p.Bytes, e); reason != "" {
		return Pulled{}, &RefusedError{Key: e.Key, Reason: reason}
	}
	if err := out.Sync(); err != nil {
		return Pulled{}, err
	}
	if err := out.Close(); err != nil {
		return Pulled{}, err
	}
	if bf != nil {
		p.Stored, p.NotKept = bf.commit()
		p.Backfilled = p.NotKept == nil
	}
	if err := atomicfile.Install(tmp, dest); err != nil {
		return Pulled{}, err
	}
	if p.Backfilled {
		p.Entry.LastUsed = c.now()
	}
	return p, nil
}

// copyPulled copies body to out and, while it can take it, to the
// backfill, hashing, and returns the SHA-256 of what it copied. A read
// that fails is the store's (or ctx's), a write to out dest's; a write to
// the backfill that fails only drops the backfill. More bytes than the
// entry has are refused as they come, never written.
func copyPulled(ctx context.Context, body io.Reader, out io.Writer, bf *backfill, e Entry, m *meter) (string, error) {
	h := sha256.New()
	buf := make([]byte, copyBuffer)
	var n int64
	for {
		got, rerr := body.Read(buf)
		if got > 0 {
			if n += int64(got); n > e.Size {
				return "", &RefusedError{Key: e.Key, Reason: fmt.Sprintf("the store sent more than the %d bytes of its engine", e.Size)}
			}
			chunk := buf[:got]
			h.Write(chunk)
			if _, err := out.Write(chunk); err != nil {
				return "", err
			}
			bf.write(chunk)
			m.add(int64(got))
		}
		switch {
		case errors.Is(rerr, io.EOF):
			return hex.EncodeToString(h.Sum(nil)), nil
		case rerr != nil:
			return "", storeFailed(ctx, e.Key, "read", rerr)
		}
	}
}

// backfill is the local entry a pull fills as the engine comes: a staging
// folder of the cache, with the entry's folder and engine file open.
type backfill struct {
	c           *Cache
	k           Key
	root, shard *folder
	st          *stage
	dir         *folder
	engine      *os.File
	meta        []byte // the metadata file to write: the checked entry, encoded as Store encodes one
	err         error  // why the backfill was dropped part way
}

// startBackfill prepares the local entry for e: nil, with the reason,
// when the folder cannot take it (read-only, larger than max-size, or a
// failure making the staging folder).
func (c *Cache) startBackfill(e Entry, dest string) (*backfill, error) {
	if c.readOnly {
		return nil, ErrReadOnly
	}
	meta, err := encodeMeta(e)
	if err != nil {
		return nil, storeError(err)
	}
	if err := c.checkFits(dest, entrySize(e.Size, int64(len(meta)))); err != nil {
		return nil, err
	}
	b := &backfill{c: c, k: e.Key, meta: meta}
	if err := b.open(); err != nil {
		b.abandon()
		return nil, storeError(err)
	}
	return b, nil
}

func (b *backfill) open() error {
	var err error
	if b.root, err = b.c.openRoot(true); err != nil {
		return err
	}
	if b.shard, err = b.c.ownFolder(b.root, string(b.k[:2])); err != nil {
		return err
	}
	if b.st, err = b.c.newStage(b.root, "pull-"); err != nil {
		return err
	}
	if b.dir, err = b.st.dir.makeSub(stagedName); err != nil {
		return err
	}
	b.engine, err = b.dir.open(engineName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	return err
}

// write adds a chunk of the engine; a failure (a full disk) drops the
// backfill, and frees what it had written, at once.
func (b *backfill) write(p []byte) {
	if b == nil || b.err != nil {
		return
	}
	if _, err := b.engine.Write(p); err != nil {
		b.err = storeError(err)
		b.release()
	}
}

// commit writes the metadata and installs the entry, once the engine is
// whole and checked: what Store would have done (Kept when another
// process stored the key meanwhile), or why the folder did not take it.
func (b *backfill) commit() (Stored, error) {
	if b.err != nil {
		return Stored{}, b.err
	}
	defer b.abandon() // the staging folder: empty once the entry is installed from it
	err := b.engine.Sync()
	if closeErr := b.engine.Close(); err == nil {
		err = closeErr
	}
	b.engine = nil
	if err == nil {
		_, err = createIn(b.dir, metaName, bytes.NewReader(b.meta))
	}
	if err != nil {
		return Stored{}, storeError(err)
	}
	_ = b.dir.chtimes(metaName, b.c.now()) // in use from the moment it is in place, as in fill
	b.dir.sync()
	b.dir.close()
	b.dir = nil
	return b.c.commit(b.root, b.shard, b.st, b.k, false)
}

// release lets go of the open files and removes the staging folder.
func (b *backfill) release() {
	if b.engine != nil {
		b.engine.Close()
		b.engine = nil
	}
	if b.dir != nil {
		b.dir.close()
		b.dir = nil
	}
	if b.st != nil {
		b.st.remove()
		b.st = nil
	}
}

// abandon releases everything the backfill holds; nil and twice are fine.
func (b *backfill) abandon() {
	if b == nil {
		return
	}
	b.release()
	for _, d := range []*folder{b.shard, b.root} {
		if d != nil {
			d.close()
		}
	}
	b.shard, b.root = nil, nil
}
