package remote

import (
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	orasremote "oras.land/oras-go/v2/registry/remote"
)

// Put pushes the files' layers (those the registry lacks), the metadata
// as the config blob, and the manifest by its tag, key, last: a reader sees
// the whole entry or none. Without replace, a tag already there (looked at
// first, so nothing is uploaded for an entry the registry has, and again
// just before tagging) means pushed=false.
//
// With replace, the files are laid out anew (replacementCut), so every
// layer is a blob the registry has never stored: a replacement is what
// mends an entry whose blob bytes were changed in the registry's storage,
// and a registry keeps the first bytes stored under a digest whatever is
// uploaded under it later. CNCF Distribution does (its blob writer's
// moveBlob, registry/storage/blobwriter.go, leaves an existing blob's data
// as it is, "while it may be corrupted"; checked against docker-registry
// 2.8: a blob's bytes changed in its storage, the blob deleted from the
// repository and the same bytes uploaded again, it still serves the changed
// bytes, in that repository and in any other), and deleting a blob there
// only unlinks it from the repository until garbage collection. The cost
// is the whole file uploaded again even where the registry's bytes were
// right, as an S3 replacement uploads it; a rebuild's engine usually has
// other bytes anyway (TensorRT's tactic timing). The metadata (the config
// blob) names the build's end to the nanosecond, so a replacement's is a
// new blob too.
//
// The registry API has no conditional tag: two runners that both find the
// tag missing both tag, and the last tag stays. So a Put, after tagging,
// waits for the race to settle (settleDelay) and resolves the tag again:
// pushed is true only when the tag still names its own manifest (each
// Put's manifest is its own: ociPushAnnotation). The window left is the
// package comment's.
func (s *ociStore) Put(ctx context.Context, key string, meta []byte, files []Upload, replace bool) (bool, error) {
	if err := checkUploads(key, meta, files); err != nil {
		return false, fmt.Errorf("%s: putting %s: %w", s.location, key, err)
	}
	// Split files are hashed part by part first: no bytes move over the
	// network meanwhile, so this is outside the watchdog.
	layers, bodies, err := s.layers(files, replace)
	if err != nil {
		return false, fmt.Errorf("%s: putting %s: %w", s.location, key, err)
	}
	ctx, w := watch(ctx, s.stall)
	defer w.stop()
	pushed, err := s.put(ctx, w, key, meta, layers, bodies, replace)
	return pushed, s.fail(ctx, "putting "+key, err)
}

func (s *ociStore) put(ctx context.Context, w *watchdog, key string, meta []byte, layers []ocispec.Descriptor, bodies []section, replace bool) (bool, error) {
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
			ociPushAnnotation:         cryptorand.Text(),
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
	if s.beforeTag != nil {
		s.beforeTag()
	}
	desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(manifest), Size: int64(len(manifest))}
	start := time.Now()
	if err := repo.PushReference(ctx, desc, bytes.NewReader(manifest), key); err != nil {
		return false, err
	}
	took := time.Since(start)
	if s.afterTag != nil {
		s.afterTag()
	}
	return s.settled(ctx, w, repo, key, desc.Digest, settleDelay(took))
}

// settleDelay is how long a Put waits after its tag before it looks again
// whose manifest the tag names: twice the time its own tag request took,
// at least settleMin and at most settleMax. A runner racing this one
// found the tag missing before this tag landed, and its tag lands one
// request later (its tag's request, sent as soon as its look answered);
// the same registry takes about as long for that request as for this
// one's, so twice this one's time, and never less than settleMin (a
// registry answers one runner quickly and another slowly; a 5xx retried
// once is 250 ms more), covers it. settleMax bounds what a slow registry
// adds to a push, which runs beside other builds: only a run's last push
// makes the run wait for it.
func settleDelay(tagTook time.Duration) time.Duration {
	return min(max(settleMin, 2*tagTook), settleMax)
}

const (
	settleMin = time.Second
	settleMax = 10 * time.Second
)

// settled waits wait (the watchdog paused: no bytes are due), then
// resolves key's tag: pushed when it names ours, not when it names
// another manifest (a racing runner's tag landed after ours) or none (the
// entry was deleted meanwhile).
func (s *ociStore) settled(ctx context.Context, w *watchdog, repo *orasremote.Repository, key string, ours digest.Digest, wait time.Duration) (bool, error) {
	w.pause()
	t := time.NewTimer(wait)
	select {
	case <-ctx.Done():
		t.Stop()
		return false, context.Cause(ctx)
	case <-t.C:
	}
	w.resume()
	desc, err := repo.Resolve(ctx, key)
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return desc.Digest == ours, nil
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
// once more before the upload reads it: one more read and SHA-256 pass
// over the file, seconds per GiB on one core. A replacement's file is cut
// first at replacementCut's offset instead, then in parts of partSize
// bytes.
func (s *ociStore) layers(files []Upload, replace bool) ([]ocispec.Descriptor, []section, error) {
	var layers []ocispec.Descriptor
	var bodies []section
	for _, f := range files {
		annotations := map[string]string{
			ocispec.AnnotationTitle: f.Name,
			ociFileSizeAnnotation:   strconv.FormatInt(f.Size, 10),
			ociFileSHAAnnotation:    f.SHA256,
		}
		cut := s.partSize // where the first layer ends
		if replace {
			cut = replacementCut(f.Size, s.partSize)
		}
		if f.Size <= cut {
			layers = append(layers, ocispec.Descriptor{MediaType: ociFileType, Size: f.Size,
				Digest: digest.NewDigestFromEncoded(digest.SHA256, f.SHA256), Annotations: annotations})
			bodies = append(bodies, section{f.Body, 0, f.Size})
			continue
		}
		for off, n := int64(0), cut; off < f.Size; off, n = off+n, s.partSize {
			part := section{f.Body, off, min(n, f.Size-off)}
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

// replacementCut is where a replacement cuts a file of size bytes first:
// at a random offset in the middle half of its first partSize bytes, so
// its parts are byte ranges no layout put before (the first layout cuts at
// multiples of partSize, and another replacement of the same file at
// another random offset, the same one with odds of about 2/partSize, or
// 2/size for a file smaller than partSize: one in half a million for a
// 1 MiB engine), and none is empty or larger than partSize. A file of
// fewer than 2 bytes has no other layout: it is one layer.
func replacementCut(size, partSize int64) int64 {
	m := min(size, partSize)
	if m < 2 {
		return size
	}
	return max(1, m/4+rand.Int64N(max(1, m/2)))
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
