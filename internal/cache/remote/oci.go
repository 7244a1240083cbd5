package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	orasremote "oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// What an entry is in an OCI registry: one artifact (an OCI image
// manifest) per key, tagged with the key.
var (
	// ociArtifactType is the manifest's artifactType; the format version
	// in it keeps another format's entries from being read.
	ociArtifactType = fmt.Sprintf("application/vnd.trt-action.cache.entry.v%d", FormatVersion)
	// ociMetaType is the config blob's media type: the metadata bytes.
	ociMetaType = fmt.Sprintf("application/vnd.trt-action.cache.metadata.v%d+json", FormatVersion)
)

const (
	// ociFileType is each layer's media type: a file, or one part of it.
	ociFileType = "application/vnd.trt-action.cache.file"
	// Annotations: the manifest's key (Entry.Key, so a manifest tagged
	// with another key is told apart), each layer's whole file.
	ociKeyAnnotation      = "com.github.trt-action.cache.key"
	ociFileSizeAnnotation = "com.github.trt-action.cache.file.size"
	ociFileSHAAnnotation  = "com.github.trt-action.cache.file.sha256"
	// maxLayerBytes bounds a layer: a larger file is pushed as ordered
	// parts of this size, so registries that limit a layer's size take
	// any engine.
	maxLayerBytes = 4 << 30
	// maxManifestBytes bounds a manifest as Get reads it: ours are a few
	// hundred bytes per layer.
	maxManifestBytes = 256 << 10
)

// ociStore is a repository of an OCI registry (oras-go's client).
type ociStore struct {
	location string // the URL, redacted
	host     string // HOST[:PORT]
	repoName string
	partSize int64
	stall    time.Duration
	client   *auth.Client // credentials, retries, the watchdog, TLS
	probe    *http.Client // for plainHTTP's probe

	mu      sync.Mutex
	plain   bool // decided: speak plain HTTP (a local registry without TLS)
	decided bool
}

func openOCI(ctx context.Context, u *url.URL, o Options) (Store, error) {
	raw := u.String()
	if u.RawQuery != "" || u.ForceQuery {
		return nil, badURL(raw, "an oci:// URL takes no query")
	}
	ref := registry.Reference{Registry: u.Host, Repository: strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/")}
	if err := ref.ValidateRegistry(); err != nil || u.Port() != "" && !validPort(u.Port()) {
		return nil, badURL(raw, "%q is not a registry's HOST[:PORT]", u.Host)
	}
	if ref.Repository == "" {
		return nil, badURL(raw, "no REPOSITORY after the host")
	}
	if err := ref.ValidateRepository(); err != nil {
		return nil, badURL(raw, "REPOSITORY %q is not a repository's name (lowercase letters and digits, "+
			"parts joined by ., _, __ or -, path components joined by /)", ref.Repository)
	}
	base, err := newTransport(o.Getenv)
	if err != nil {
		return nil, err
	}
	cred, err := ociCredentials(o.Getenv)
	if err != nil {
		return nil, err
	}
	retrying := &retry.Transport{Base: base, Policy: func() retry.Policy { return ociRetryPolicy }}
	s := &ociStore{
		location: Redact(raw), host: u.Host, repoName: ref.Repository,
		partSize: o.partSize, stall: o.Stall,
		client: &auth.Client{
			Client:     &http.Client{Transport: rewindTransport{base: retrying}},
			Cache:      auth.NewCache(),
			Credential: cred,
			ClientID:   "trt-action",
		},
		probe: &http.Client{Transport: retrying},
	}
	if s.partSize <= 0 {
		s.partSize = maxLayerBytes
	}
	s.client.SetUserAgent("trt-action")
	return s, nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 65536
}

// ociRetryPolicy retries a request that failed for a reason that may pass:
// oras-go's default policy (a 5xx, 408 or 429 answer, a connection reset,
// a dial timeout, a response cut short; 4 retries here, 200 ms to 3 s
// apart with exponential backoff and jitter), and a refused connection,
// so a registry that restarts costs seconds, not the run's remote.
var ociRetryPolicy retry.Policy = &retry.GenericPolicy{
	Retryable: func(resp *http.Response, err error) (bool, error) {
		if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
			return true, nil
		}
		return retry.DefaultPredicate(resp, err)
	},
	Backoff:  retry.DefaultBackoff,
	MinWait:  200 * time.Millisecond,
	MaxWait:  3 * time.Second,
	MaxRetry: 4,
}

func (s *ociStore) Location() string { return s.location }

// repository is the client of s's repository for one operation, once
// plainHTTP has decided how to reach it.
func (s *ociStore) repository(ctx context.Context) (*orasremote.Repository, error) {
	plain, err := s.plainHTTP(ctx)
	if err != nil {
		return nil, err
	}
	return &orasremote.Repository{
		Client:             s.client,
		Reference:          registry.Reference{Registry: s.host, Repository: s.repoName},
		PlainHTTP:          plain,
		ManifestMediaTypes: []string{ocispec.MediaTypeImageManifest},
		SkipReferrersGC:    true,
	}, nil
}

// plainHTTP decides, once per store, whether the registry is spoken to in
// plain HTTP: only a registry on this machine (isLoopback) that answers a
// TLS handshake with something else (as containerd decides it). The probe
// is one GET of /v2/ over HTTPS; any HTTP answer (401 included) settles
// HTTPS. A probe that fails otherwise (nothing listening) decides nothing
// and fails the operation.
func (s *ociStore) plainHTTP(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.decided {
		return s.plain, nil
	}
	if !isLoopback((&url.URL{Host: s.host}).Hostname()) {
		s.decided = true
		return false, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+s.host+"/v2/", nil)
	if err != nil {
		return false, err
	}
	resp, err := s.probe.Do(req)
	switch {
	case err == nil:
		resp.Body.Close()
	case notTLS(err):
		s.plain = true
	default:
		return false, err
	}
	s.decided = true
	return s.plain, nil
}

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
		return nil, corrupt("tag %s is a %q, not an OCI image manifest", key, desc.MediaType)
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
		return nil, corrupt("the manifest is not JSON: %v", err)
	}
	switch {
	case m.SchemaVersion != 2 || m.MediaType != ocispec.MediaTypeImageManifest:
		return nil, corrupt("the manifest is not an OCI image manifest (schemaVersion 2)")
	case m.ArtifactType != ociArtifactType:
		return nil, corrupt("the manifest's artifactType is %q, not %q", m.ArtifactType, ociArtifactType)
	case m.Config.MediaType != ociMetaType:
		return nil, corrupt("the manifest's config is a %q, not %q", m.Config.MediaType, ociMetaType)
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
			return nil, corrupt("file %q: its layers hold %d bytes, not the %d it names", f.Name, sum, f.Size)
		}
		if len(out.parts[i]) == 1 && out.parts[i][0].Digest.Encoded() != f.SHA256 {
			return nil, corrupt("file %q: its layer's digest is not the SHA-256 it names", f.Name)
		}
	}
	return out, nil
}

// layerFile is the file layer i is (part of), from its annotations.
func layerFile(l ocispec.Descriptor, i int) (File, error) {
	if l.MediaType != ociFileType {
		return File{}, corrupt("layer %d is a %q, not %q", i, l.MediaType, ociFileType)
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
		return corrupt("%s: %q of %d bytes is not a SHA-256 digest and a size", what, d.Digest, d.Size)
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

// readCloser is a reader with another's Close.
type readCloser struct {
	io.Reader
	io.Closer
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
	return newWatchedReader(ctx, r, w), nil
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
			if err != nil && !errors.Is(err, ErrCorrupt) {
				err = p.s.fail(p.ctx, "reading "+p.name, err)
			}
			return n, err
		}
		if p.done == len(p.parts) {
			return n, io.EOF
		}
		p.cur.Close()
		if err := p.next(); err != nil {
			return n, p.s.fail(p.ctx, "reading "+p.name, err)
		}
		if n > 0 {
			return n, nil
		}
	}
}

func (p *partsReader) Close() error { return p.cur.Close() }

// Has resolves key's tag.
func (s *ociStore) Has(ctx context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	ctx, w := watch(ctx, s.stall)
	defer w.stop()
	repo, err := s.repository(ctx)
	if err != nil {
		return false, s.fail(ctx, "looking up "+key, err)
	}
	ok, err := s.tagged(ctx, repo, key)
	return ok, s.fail(ctx, "looking up "+key, err)
}

func (s *ociStore) tagged(ctx context.Context, repo *orasremote.Repository, key string) (bool, error) {
	_, err := repo.Resolve(ctx, key)
	if errors.Is(err, errdef.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Put pushes the files' layers (those the registry lacks), the metadata
// as the config blob, and the manifest by its tag, key, last: a reader sees
// the whole entry or none. Without replace, a tag already there (looked at
// first, so nothing is uploaded for an entry the registry has, and again
// just before tagging) means pushed=false.
//
// The race left: the registry API has no conditional tag, so two runners
// that both find the tag missing both tag, and the last tag wins. Both
// report pushed=true; both entries are right for the key (a key names
// everything that decides the engine), so readers get one or the other
// whole. The cost is the loser's upload, and its manifest left untagged
// (its blobs too, where no other manifest uses them) until the registry's
// garbage collection; a reader that got the loser's manifest before the
// second tag still reads it whole, as blobs outlive their tags.
func (s *ociStore) Put(ctx context.Context, key string, meta []byte, files []Upload, replace bool) (bool, error) {
	if err := checkUploads(key, meta, files); err != nil {
		return false, fmt.Errorf("%s: putting %s: %w", s.location, key, err)
	}
	// Split files are hashed part by part first: no bytes move over the
	// network meanwhile, so this is outside the watchdog.
	layers, bodies, err := s.layers(files)
	if err != nil {
		return false, fmt.Errorf("%s: putting %s: %w", s.location, key, err)
	}
	ctx, w := watch(ctx, s.stall)
	defer w.stop()
	pushed, err := s.put(ctx, key, meta, layers, bodies, replace)
	return pushed, s.fail(ctx, "putting "+key, err)
}

func (s *ociStore) put(ctx context.Context, key string, meta []byte, layers []ocispec.Descriptor, bodies []section, replace bool) (bool, error) {
	repo, err := s.repository(ctx)
	if err != nil {
		return false, err
	}
	if !replace {
		if there, err := s.tagged(ctx, repo, key); err != nil || there {
			return false, err
		}
	}
	for i, l := range layers {
		body := bodies[i]
		if err := pushMissing(ctx, repo, l, func() io.Reader { return body.reader() }); err != nil {
			return false, err
		}
	}
	config := ocispec.Descriptor{MediaType: ociMetaType, Digest: digest.FromBytes(meta), Size: int64(len(meta))}
	if err := pushMissing(ctx, repo, config, func() io.Reader { return bytes.NewReader(meta) }); err != nil {
		return false, err
	}
	manifest, err := json.Marshal(ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ociArtifactType,
		Config:       config,
		Layers:       layers,
		Annotations: map[string]string{
			ocispec.AnnotationCreated: time.Now().UTC().Format(time.RFC3339),
			ociKeyAnnotation:          key,
		},
	})
	if err != nil {
		return false, err
	}
	if !replace {
		if there, err := s.tagged(ctx, repo, key); err != nil || there {
			return false, err
		}
	}
	desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(manifest), Size: int64(len(manifest))}
	if err := repo.PushReference(ctx, desc, bytes.NewReader(manifest), key); err != nil {
		return false, err
	}
	return true, nil
}

// pushMissing pushes a blob the registry does not have.
func pushMissing(ctx context.Context, repo *orasremote.Repository, d ocispec.Descriptor, body func() io.Reader) error {
	there, err := repo.Blobs().Exists(ctx, d)
	if err != nil || there {
		return err
	}
	return repo.Blobs().Push(ctx, d, body())
}

// section is a part of an upload's body.
type section struct {
	src       io.ReaderAt
	off, size int64
}

func (s section) reader() io.Reader {
	return &uploadBody{SectionReader: io.NewSectionReader(s.src, s.off, s.size), s: s}
}

// layers are the layers files are pushed as, with their bodies: a file
// of at most partSize bytes is one layer whose digest is the file's
// SHA-256, which Upload carries; a larger one is parts of partSize bytes
// (the last shorter), whose digests are computed here by reading the file
// once (about 2 s per GiB on one core, before the upload reads it again).
func (s *ociStore) layers(files []Upload) ([]ocispec.Descriptor, []section, error) {
	var layers []ocispec.Descriptor
	var bodies []section
	for _, f := range files {
		annotations := map[string]string{
			ocispec.AnnotationTitle: f.Name,
			ociFileSizeAnnotation:   strconv.FormatInt(f.Size, 10),
			ociFileSHAAnnotation:    f.SHA256,
		}
		if f.Size <= s.partSize {
			layers = append(layers, ocispec.Descriptor{MediaType: ociFileType, Size: f.Size,
				Digest: digest.NewDigestFromEncoded(digest.SHA256, f.SHA256), Annotations: annotations})
			bodies = append(bodies, section{f.Body, 0, f.Size})
			continue
		}
		for off := int64(0); off < f.Size; off += s.partSize {
			part := section{f.Body, off, min(s.partSize, f.Size-off)}
			h := sha256.New()
			if _, err := io.Copy(h, io.NewSectionReader(part.src, part.off, part.size)); err != nil {
				return nil, nil, fmt.Errorf("reading %s: %w", f.Name, err)
			}
			layers = append(layers, ocispec.Descriptor{MediaType: ociFileType, Size: part.size,
				Digest: digest.NewDigestFromEncoded(digest.SHA256, hex.EncodeToString(h.Sum(nil))), Annotations: annotations})
			bodies = append(bodies, part)
		}
	}
	return layers, bodies, nil
}

// uploadBody is a layer's body as a request carries it. net/http knows how
// to send again only bodies in memory; rewindTransport gives a request
// with an uploadBody the means to (GetBody), so the retries below it and
// the credentials' second attempt can send a layer again.
type uploadBody struct {
	*io.SectionReader
	s section
}

func (b *uploadBody) Close() error { return nil }

type rewindTransport struct{ base http.RoundTripper }

func (t rewindTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if b, ok := req.Body.(*uploadBody); ok && req.GetBody == nil {
		req = req.Clone(req.Context())
		req.GetBody = func() (io.ReadCloser, error) { return b.s.reader().(*uploadBody), nil }
	}
	return t.base.RoundTrip(req)
}

// List lists the repository's tags that are keys, with each one's
// manifest (its layers' sizes and upload time) and metadata. A tag whose
// manifest is not an entry is listed with its key alone.
func (s *ociStore) List(ctx context.Context, fn func(Listed) error) error {
	ctx, w := watch(ctx, s.stall)
	defer w.stop()
	repo, err := s.repository(ctx)
	if err != nil {
		return s.fail(ctx, "listing", err)
	}
	var callerErr error
	err = repo.Tags(ctx, "", func(tags []string) error {
		for _, tag := range tags {
			if !validKey(tag) {
				continue
			}
			l, ok, err := s.listed(ctx, repo, tag)
			if err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			w.pause()
			callerErr = fn(l)
			w.resume()
			if callerErr != nil {
				return callerErr
			}
		}
		return nil
	})
	if callerErr != nil {
		return callerErr
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

// Delete deletes key's manifest (which untags it). Its blobs stay until
// the registry's garbage collection, since other manifests may use them.
// ErrUnsupported where the registry refuses deletion (405 or UNSUPPORTED:
// a Distribution registry without storage.delete.enabled, GHCR).
func (s *ociStore) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	ctx, w := watch(ctx, s.stall)
	defer w.stop()
	err := s.delete(ctx, key)
	return s.fail(ctx, "deleting "+key, err)
}

func (s *ociStore) delete(ctx context.Context, key string) error {
	repo, err := s.repository(ctx)
	if err != nil {
		return err
	}
	desc, err := repo.Resolve(ctx, key)
	if err != nil {
		return err
	}
	return repo.Delete(ctx, desc)
}

// fail is the error of an operation, doing what: named by the store and,
// where it is one of the package's errors, wrapping it. An error that
// holds the registry's answer to the credentials says only its status:
// nothing of a request's headers ever reaches a message.
func (s *ociStore) fail(ctx context.Context, doing string, err error) error {
	if err == nil {
		return nil
	}
	err = stalled(ctx, err)
	var resp *errcode.ErrorResponse
	switch {
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrStalled):
	case errors.Is(err, errdef.ErrNotFound):
		return fmt.Errorf("%s: %s: %w", s.location, doing, ErrNotFound)
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return fmt.Errorf("%s: %s: %s asks for credentials and none were found for it "+
			"(docker login %s, or DOCKER_CONFIG naming a folder with a config.json that has them): %w",
			s.location, doing, s.host, s.host, ErrAuth)
	case errors.As(err, &resp) && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		return fmt.Errorf("%s: %s: %s refused the credentials, or what they may do (HTTP %d): %w",
			s.location, doing, s.host, resp.StatusCode, ErrAuth)
	case errors.As(err, &resp) && (resp.StatusCode == http.StatusMethodNotAllowed || hasCode(resp, errcode.ErrorCodeUnsupported)):
		return fmt.Errorf("%s: %s: %s does not allow it (HTTP %d): %w", s.location, doing, s.host, resp.StatusCode, ErrUnsupported)
	}
	return fmt.Errorf("%s: %s: %w", s.location, doing, err)
}

func hasCode(resp *errcode.ErrorResponse, code string) bool {
	for _, e := range resp.Errors {
		if e.Code == code {
			return true
		}
	}
	return false
}
