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
	"github.com/trt-action/trt-action/internal/text"
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

// Pull takes k's engine from the shared store s into dest: PullFiles with
// the one file of a build without run:.
func (c *Cache) Pull(ctx context.Context, s remote.Store, k Key, dest string, progress Progress) (Pulled, bool, error) {
	return c.PullFiles(ctx, s, k, EngineDecl(dest, ""), progress)
}

// PullFiles takes k's entry from the shared store s, after a miss in the
// folder, and delivers its files where the build puts them (want: the
// files the build declares, in order, each at its Local path): its
// metadata is checked as strictly as a local entry.json's (checkRemote),
// then each file is streamed once, into a partial file beside its path
// and into a staging folder of the cache in the same pass, and hashed.
// Only when every file's size and SHA-256 are the metadata's is the
// staged entry installed (as Store installs one: Kept when another
// process stored k meanwhile) and the partial files renamed to their
// paths, all of them or none (atomicfile.InstallAll). When the folder
// cannot take the entry (read-only, larger than max-size, a full disk),
// the files are still delivered and Pulled.NotKept says why.
//
// A hit returns (pulled, true, nil); a miss (the store has no entry for k)
// (zero, false, nil). An entry refused is a *RefusedError, a store that
// failed a *StoreError, a stop of ctx (a budget, a signal) its cause, and
// any other error is a path's or the folder's; after any error nothing of
// the pull is left at the paths or in the cache. progress is told of the
// files' bytes as they come.
func (c *Cache) PullFiles(ctx context.Context, s remote.Store, k Key, want []Decl, progress Progress) (Pulled, bool, error) {
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
	e, err := checkRemote(k, found, want)
	if err != nil {
		return Pulled{}, false, err
	}
	m.total = e.Bytes()
	p, err := c.receive(ctx, s, found, e, want, m)
	if err != nil {
		return Pulled{}, false, err
	}
	return p, true, nil
}

// checkRemote checks an entry a store returned for k as readMeta checks a
// local one, and against the store's own records of its files and the
// files the build declares (want): bounded metadata of this format for
// this key, listing the files the store's records name (names, sizes and
// SHA-256s, in order) and the build declares (roles and paths). A refusal
// is a *RefusedError.
func checkRemote(k Key, found *remote.Entry, want []Decl) (Entry, error) {
	refuse := func(format string, args ...any) (Entry, error) {
		return Entry{}, &RefusedError{Key: k, Reason: fmt.Sprintf(format, args...)}
	}
	if found.Key != string(k) {
		return refuse("the store answered with the entry of key %s", text.QuotedCut(found.Key))
	}
	if len(found.Meta) > remote.MaxMetaBytes {
		return refuse("its metadata has %d bytes, more than the %d an entry's may have", len(found.Meta), remote.MaxMetaBytes)
	}
	m, err := decodeMeta(found.Meta, true)
	if err != nil {
		return refuse("%v", err)
	}
	if !m.Key.Valid() {
		return refuse("its metadata names key %s", text.QuotedCut(string(m.Key)))
	}
	e, err := checkDecoded(m, found.Uploaded, int64(len(found.Meta)), k)
	if err != nil {
		return refuse("%v", err)
	}
	if reason := recordsDiffer(e.Files, found.Files); reason != "" {
		return refuse("%s", reason)
	}
	if reason := otherFiles(e.Files, want); reason != "" {
		return refuse("%s", reason)
	}
	return e, nil
}

// recordsDiffer says how the files an entry's metadata lists differ from
// the store's own records of them, "" when they do not.
func recordsDiffer(files []File, records []remote.File) string {
	if len(records) != len(files) {
		return fmt.Sprintf("the store has %d files for it, its metadata lists %d", len(records), len(files))
	}
	for i, f := range files {
		r := records[i]
		if r.Name != f.Name || r.Size != f.Size || r.SHA256 != f.SHA256 {
			return fmt.Sprintf("the store's record of file %d (%s, %d bytes, SHA-256 %s) is not what its metadata lists (%s, %d bytes, SHA-256 %s)",
				i+1, text.QuotedCut(r.Name), r.Size, text.QuotedCut(r.SHA256), f.Name, f.Size, f.SHA256)
		}
	}
	return ""
}

// receive streams the entry's files once each into a partial file beside
// their paths and the backfill's staging folder, checks them, then
// installs both.
func (c *Cache) receive(ctx context.Context, s remote.Store, found *remote.Entry, e Entry, want []Decl, m *meter) (Pulled, error) {
	staged := make([]atomicfile.Staged, 0, len(want))
	defer func() {
		for _, st := range staged {
			os.Remove(st.Tmp) // gone already once installed
		}
	}()
	p := Pulled{Entry: e}
	bf, err := c.startBackfill(e, want)
	p.NotKept = err
	defer bf.abandon() // nothing once committed
	for i, f := range e.Files {
		tmp, err := c.receiveFile(ctx, s, found, i, f, want[i].Local, bf, m)
		if tmp != "" {
			staged = append(staged, atomicfile.Staged{Tmp: tmp, Path: want[i].Local})
		}
		if err != nil {
			return Pulled{}, err
		}
	}
	p.Transfer = m.end()
	if bf != nil {
		p.Stored, p.NotKept = bf.commit()
		p.Backfilled = p.NotKept == nil
	}
	if err := atomicfile.InstallAll(staged); err != nil {
		return Pulled{}, err
	}
	if p.Backfilled {
		p.Entry.LastUsed = c.now()
	}
	return p, nil
}

// receiveFile streams file i of the entry (f) into a new partial file
// beside dest and into the backfill, and checks it; it returns the
// partial file's name, also after an error once it was made.
func (c *Cache) receiveFile(ctx context.Context, s remote.Store, found *remote.Entry, i int, f File, dest string, bf *backfill, m *meter) (string, error) {
	tmp, out, err := openPartial(dest)
	if err != nil {
		return "", err
	}
	defer out.Close() // closed already once complete; a second close does nothing
	bf.next(f.Name)
	body, err := s.Open(ctx, found, i)
	if err != nil {
		return tmp, storeFailed(ctx, Key(found.Key), "read", err)
	}
	// The store's reader ends when ctx does (its request is ctx's): a
	// signal ends a pull at once. It is not closed from another goroutine
	// meanwhile: readers are not safe for that.
	sum, n, err := copyPulled(ctx, body, out, bf, f, Key(found.Key), m)
	body.Close()
	if err != nil {
		return tmp, err
	}
	if reason := fileMismatch(f, sum, n); reason != "" {
		return tmp, &RefusedError{Key: Key(found.Key), Reason: reason}
	}
	if err := out.Sync(); err != nil {
		return tmp, err
	}
	return tmp, out.Close()
}

// copyPulled copies body, file f of k's entry, to out and, while it can
// take it, to the backfill, hashing, and returns the SHA-256 and size of
// what it copied. A read that fails is the store's (or ctx's), a write to
// out the path's; a write to the backfill that fails only drops the
// backfill. More bytes than the file has are refused as they come, never
// written.
func copyPulled(ctx context.Context, body io.Reader, out io.Writer, bf *backfill, f File, k Key, m *meter) (string, int64, error) {
	h := sha256.New()
	buf := make([]byte, copyBuffer)
	var n int64
	for {
		got, rerr := body.Read(buf)
		if got > 0 {
			if n += int64(got); n > f.Size {
				return "", 0, &RefusedError{Key: k, Reason: fmt.Sprintf("the store sent more than the %d bytes of its %s", f.Size, f.Name)}
			}
			chunk := buf[:got]
			h.Write(chunk)
			if _, err := out.Write(chunk); err != nil {
				return "", 0, err
			}
			bf.write(chunk)
			m.add(int64(got))
		}
		switch {
		case errors.Is(rerr, io.EOF):
			return hex.EncodeToString(h.Sum(nil)), n, nil
		case rerr != nil:
			return "", 0, storeFailed(ctx, k, "read", rerr)
		}
	}
}

// backfill is the local entry a pull fills as the files come: a staging
// folder of the cache, with the entry's folder and the file being
// received open.
type backfill struct {
	c           *Cache
	k           Key
	root, shard *folder
	st          *stage
	dir         *folder
	file        *os.File // the file being received; nil between two
	meta        []byte   // the metadata file to write: the checked entry, encoded as Store encodes one
	err         error    // why the backfill was dropped part way
}

// startBackfill prepares the local entry for e: nil, with the reason,
// when the folder cannot take it (read-only, larger than max-size, or a
// failure making the staging folder).
func (c *Cache) startBackfill(e Entry, want []Decl) (*backfill, error) {
	if c.readOnly {
		return nil, ErrReadOnly
	}
	meta, err := encodeMeta(e)
	if err != nil {
		return nil, storeError(err)
	}
	if err := c.checkFits(want, entrySize(e.Bytes(), int64(len(meta)))); err != nil {
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
	b.dir, err = b.st.dir.makeSub(stagedName)
	return err
}

// next ends the file received before (synced) and starts the entry's file
// name; a failure drops the backfill.
func (b *backfill) next(name string) {
	if b == nil || b.err != nil {
		return
	}
	err := b.endFile()
	if err == nil {
		b.file, err = b.dir.open(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		b.err = storeError(err)
		b.release()
	}
}

// endFile syncs and closes the file being received, if any.
func (b *backfill) endFile() error {
	if b.file == nil {
		return nil
	}
	err := b.file.Sync()
	if closeErr := b.file.Close(); err == nil {
		err = closeErr
	}
	b.file = nil
	return err
}

// write adds a chunk of the file being received; a failure (a full disk)
// drops the backfill, and frees what it had written, at once.
func (b *backfill) write(p []byte) {
	if b == nil || b.err != nil {
		return
	}
	if _, err := b.file.Write(p); err != nil {
		b.err = storeError(err)
		b.release()
	}
}

// commit writes the metadata and installs the entry, once every file is
// whole and checked: what Store would have done (Kept when another
// process stored the key meanwhile), or why the folder did not take it.
func (b *backfill) commit() (Stored, error) {
	if b.err != nil {
		return Stored{}, b.err
	}
	defer b.abandon() // the staging folder: empty once the entry is installed from it
	err := b.endFile()
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
	if b.file != nil {
		b.file.Close()
		b.file = nil
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
