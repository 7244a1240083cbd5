package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/trt-action/trt-action/internal/text"
	"oras.land/oras-go/v2/errdef"
	orasremote "oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// Get reads key's manifest (at most maxManifestBytes), checks that it is an
// entry of this format whose layers add up to the files they name, and
// reads its config blob (the metadata, at most MaxMetaBytes by its
// descriptor, refused unread when larger).
func (s *ociStore) Get(ctx context.Context, key string) (*Entry, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	ctx, w := watch(ctx, s.stall)
	defer w.stop()
	e, err := s.get(ctx, key)
	return e, s.fail(ctx, "looking up "+key, err)
}

func (s *ociStore) get(ctx context.Context, key string) (*Entry, error) {
	repo, err := s.repository(ctx)
	if err != nil {
		return nil, err
	}
	m, err := s.manifest(ctx, repo, key)
	if err != nil {
		return nil, err
	}
	meta, err := s.blob(ctx, repo, m.manifest.Config, "metadata", MaxMetaBytes)
	if err != nil {
		return nil, err
	}
	return &Entry{Key: m.key, Meta: meta, Files: m.files, Uploaded: m.created, ref: m}, nil
}

// ociManifest is an entry's manifest, checked: what Entry.ref holds, so
// Open reads the layers Get saw.
type ociManifest struct {
	manifest ocispec.Manifest
	key      string // its key annotation
	created  time.Time
	files    []File
	parts    [][]ocispec.Descriptor // each file's layers, in order
}

// manifest fetches the manifest tagged key and checks it.
func (s *ociStore) manifest(ctx context.Context, repo *orasremote.Repository, key string) (*ociManifest, error) {
	desc, rc, err := repo.Manifests().FetchReference(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return nil, corrupt("tag %s is a %s, not an OCI image manifest", key, text.QuotedCut(desc.MediaType))
	}
	b, err := readVerified(rc, "manifest", desc.Size, desc.Digest.Encoded(), maxManifestBytes)
	if err != nil {
		return nil, err
	}
	return parseManifest(b)
}

// parseManifest checks a manifest's bytes as an entry: this format's
// artifact type and config, layers of our media type whose annotations
// name their file, a file's layers consecutive and adding up to its size,
// a one-layer file's digest its SHA-256.
func parseManifest(b []byte) (*ociManifest, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, corrupt("the manifest is not JSON: %s", cutError(err))
	}
	switch {
	case m.SchemaVersion != 2 || m.MediaType != ocispec.MediaTypeImageManifest:
		return nil, corrupt("the manifest is not an OCI image manifest (schemaVersion 2)")
	case m.ArtifactType != ociArtifactType:
		return nil, corrupt("the manifest's artifactType is %s, not %q", text.QuotedCut(m.ArtifactType), ociArtifactType)
	case m.Config.MediaType != ociMetaType:
		return nil, corrupt("the manifest's config is a %s, not %q", text.QuotedCut(m.Config.MediaType), ociMetaType)
	case len(m.Layers) == 0:
		return nil, corrupt("the manifest has no layers")
	}
	if err := checkDescriptor(m.Config, "config"); err != nil {
		return nil, err
	}
	out := &ociManifest{manifest: m, key: m.Annotations[ociKeyAnnotation]}
	if t, err := time.Parse(time.RFC3339Nano, m.Annotations[ocispec.AnnotationCreated]); err == nil {
		out.created = t
	}
	for i, l := range m.Layers {
		f, err := layerFile(l, i)
		if err != nil {
			return nil, err
		}
		n := len(out.files)
		if n > 0 && out.files[n-1] == f {
			out.parts[n-1] = append(out.parts[n-1], l)
			continue
		}
		out.files = append(out.files, f)
		out.parts = append(out.parts, []ocispec.Descriptor{l})
	}
	if err := checkFiles(out.files); err != nil {
		return nil, err
	}
	for i, f := range out.files {
		var sum int64
		for _, p := range out.parts[i] {
			sum += p.Size
		}
		if sum != f.Size {
			return nil, corrupt("file %s: its layers hold %d bytes, not the %d it names", text.QuotedCut(f.Name), sum, f.Size)
		}
		if len(out.parts[i]) == 1 && out.parts[i][0].Digest.Encoded() != f.SHA256 {
			return nil, corrupt("file %s: its layer's digest is not the SHA-256 it names", text.QuotedCut(f.Name))
		}
	}
	return out, nil
}

// layerFile is the file layer i is (part of), from its annotations.
func layerFile(l ocispec.Descriptor, i int) (File, error) {
	if l.MediaType != ociFileType {
		return File{}, corrupt("layer %d is a %s, not %q", i, text.QuotedCut(l.MediaType), ociFileType)
	}
	if err := checkDescriptor(l, fmt.Sprintf("layer %d", i)); err != nil {
		return File{}, err
	}
	size, err := strconv.ParseInt(l.Annotations[ociFileSizeAnnotation], 10, 64)
	if err != nil {
		return File{}, corrupt("layer %d: no file size in its annotations", i)
	}
	return File{Name: l.Annotations[ocispec.AnnotationTitle], Size: size, SHA256: l.Annotations[ociFileSHAAnnotation]}, nil
}

// checkDescriptor checks that d names a SHA-256 digest and a size.
func checkDescriptor(d ocispec.Descriptor, what string) error {
	if d.Digest.Algorithm() != digest.SHA256 || d.Digest.Validate() != nil || d.Size < 0 {
		return corrupt("%s: %s of %d bytes is not a SHA-256 digest and a size", what, text.QuotedCut(string(d.Digest)), d.Size)
	}
	return nil
}

// blob reads a small blob whole (the metadata): its descriptor's size is
// checked against limit before anything is fetched, and what is served
// against the size and digest.
func (s *ociStore) blob(ctx context.Context, repo *orasremote.Repository, d ocispec.Descriptor, what string, limit int64) ([]byte, error) {
	if d.Size > limit {
		return nil, corrupt("%s: %d bytes, more than the %d allowed, refused unread", what, d.Size, limit)
	}
	rc, err := s.openBlob(ctx, repo, d, what)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// openBlob streams a blob through a verifier of its descriptor's size and
// digest: the registry serves blobs without hashing them again (a blob
// whose bytes changed in its storage is served under its old digest), so
// this check is the only one. A blob the manifest names and the registry
// lacks, or serves with another length, is corrupt.
func (s *ociStore) openBlob(ctx context.Context, repo *orasremote.Repository, d ocispec.Descriptor, what string) (io.ReadCloser, error) {
	served, rc, err := repo.Blobs().FetchReference(ctx, d.Digest.String())
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, corrupt("%s: the registry has no blob %s, which the entry names", what, d.Digest)
	}
	if err != nil {
		return nil, err
	}
	if served.Size != d.Size {
		rc.Close()
		return nil, corrupt("%s: the registry serves %d bytes for blob %s, not the %d the entry names", what, served.Size, d.Digest, d.Size)
	}
	return readCloser{newVerifier(rc, what, d.Size, d.Digest.Encoded()), rc}, nil
}

// Open streams file i's layers in order, each checked by its digest and
// size as it is read, and a file of several layers also by its SHA-256.
func (s *ociStore) Open(ctx context.Context, e *Entry, i int) (io.ReadCloser, error) {
	m, ok := e.ref.(*ociManifest)
	if !ok || i < 0 || i >= len(m.files) {
		return nil, fmt.Errorf("%s: file %d of an entry this store's Get did not return", s.location, i)
	}
	ctx, w := watch(ctx, s.stall)
	r, err := s.open(ctx, m.files[i], m.parts[i])
	if err != nil {
		w.stop()
		return nil, s.fail(ctx, "reading "+m.key, err)
	}
	named := namedReader{r, func(err error) error { return s.fail(ctx, "reading "+m.key, err) }}
	return newWatchedReader(ctx, named, w), nil
}

func (s *ociStore) open(ctx context.Context, f File, parts []ocispec.Descriptor) (io.ReadCloser, error) {
	repo, err := s.repository(ctx)
	if err != nil {
		return nil, err
	}
	p := &partsReader{ctx: ctx, s: s, repo: repo, name: f.Name, parts: parts}
	if err := p.next(); err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return p, nil
	}
	return readCloser{newVerifier(p, f.Name, f.Size, f.SHA256), p}, nil
}

// partsReader reads a file's layers one after the other, each opened when
// the one before it ends.
type partsReader struct {
	ctx   context.Context
	s     *ociStore
	repo  *orasremote.Repository
	name  string
	parts []ocispec.Descriptor
	cur   io.ReadCloser
	done  int // layers opened
}

func (p *partsReader) next() error {
	what := p.name
	if len(p.parts) > 1 {
		what = fmt.Sprintf("%s (layer %d of %d)", p.name, p.done+1, len(p.parts))
	}
	rc, err := p.s.openBlob(p.ctx, p.repo, p.parts[p.done], what)
	if err != nil {
		return err
	}
	p.cur = rc
	p.done++
	return nil
}

func (p *partsReader) Read(b []byte) (int, error) {
	for {
		n, err := p.cur.Read(b)
		if err != io.EOF {
			return n, err
		}
		if p.done == len(p.parts) {
			return n, io.EOF
		}
		p.cur.Close()
		if err := p.next(); err != nil {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

func (p *partsReader) Close() error { return p.cur.Close() }

// List lists the repository's tags that are keys, with each one's
// manifest (its layers' sizes and upload time) and metadata. A tag whose
// manifest is not an entry is listed with its key alone.
func (s *ociStore) List(ctx context.Context, fn func(Listed) error) error {
	ctx, w := watch(ctx, s.stall)
	defer w.stop()
	repo, err := s.repository(ctx)
	if err == nil {
		err = repo.Tags(ctx, "", func(tags []string) error {
			keys := slices.DeleteFunc(tags, func(tag string) bool { return !validKey(tag) })
			return lookAll(ctx, w, keys, func(ctx context.Context, tag string) (Listed, bool, error) {
				return s.listed(ctx, repo, tag)
			}, fn)
		})
	}
	var caller callerError
	var resp *errcode.ErrorResponse
	switch {
	case errors.As(err, &caller):
		return caller.err
	case errors.As(err, &resp) && resp.StatusCode == http.StatusNotFound && hasCode(resp, errcode.ErrorCodeNameUnknown):
		return nil // a repository nothing was pushed to yet
	}
	return s.fail(ctx, "listing", err)
}

// listed is tag's entry as List shows it; not ok when the tag went away
// meanwhile.
func (s *ociStore) listed(ctx context.Context, repo *orasremote.Repository, tag string) (Listed, bool, error) {
	m, err := s.manifest(ctx, repo, tag)
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return Listed{}, false, nil
	case errors.Is(err, ErrCorrupt):
		return Listed{Key: tag}, true, nil
	case err != nil:
		return Listed{}, false, err
	}
	l := Listed{Key: tag, Uploaded: m.created}
	for _, f := range m.files {
		l.Size += f.Size
	}
	meta, err := s.blob(ctx, repo, m.manifest.Config, "metadata", MaxMetaBytes)
	switch {
	case err == nil:
		l.Meta = meta
	case !errors.Is(err, ErrCorrupt):
		return Listed{}, false, err
	}
	return l, true, nil
}
