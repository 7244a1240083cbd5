package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

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
	// ociPushAnnotation is the manifest's random text of one Put, so each
	// Put's manifest is its own, and a Put tells its tag from a racing
	// runner's even when both pushed the same entry.
	ociPushAnnotation = "com.github.trt-action.cache.push"
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

	// Tests' pauses in Put, nil in use: after its last look at the tag
	// and before its tag (beforeTag); after its tag, before the settle
	// wait (afterTag).
	beforeTag, afterTag func()
}

// openOCI opens oci://HOST[:PORT]/REPOSITORY, after checking every part
// of it.
func openOCI(ctx context.Context, raw string, u *url.URL, o Options) (Store, error) {
	var problems []string
	if u.RawQuery != "" || u.ForceQuery {
		problems = append(problems, "an oci:// URL takes no query")
	}
	ref := registry.Reference{Registry: u.Host, Repository: strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/")}
	if err := ref.ValidateRegistry(); err != nil || u.Port() != "" && !validPort(u.Port()) {
		problems = append(problems, fmt.Sprintf("%q is not a registry's HOST[:PORT]", u.Host))
	}
	if ref.Repository == "" {
		problems = append(problems, "no REPOSITORY after the host")
	} else if err := ref.ValidateRepository(); err != nil {
		problems = append(problems, fmt.Sprintf("REPOSITORY %q is not a repository's name (lowercase letters and "+
			"digits, parts joined by ., _, __ or -, path components joined by /)", ref.Repository))
	}
	if len(problems) > 0 {
		return nil, badURL(raw, "%s", strings.Join(problems, "; "))
	}
	base, err := newTransport(o)
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

// ociRetryPolicy retries a request that failed for a reason that may
// pass: oras-go's default policy (a 5xx, 408 or 429 answer, a connection
// reset, a dial timeout, a response cut short; 4 retries here, 250 ms to
// 3 s apart with exponential backoff and jitter). A refused connection is
// retried once (refusedOnce).
var ociRetryPolicy retry.Policy = refusedOnce{&retry.GenericPolicy{
	Retryable: func(resp *http.Response, err error) (bool, error) {
		if refused(err) {
			return true, nil
		}
		return retry.DefaultPredicate(resp, err)
	},
	Backoff:  retry.DefaultBackoff,
	MinWait:  200 * time.Millisecond,
	MaxWait:  3 * time.Second,
	MaxRetry: 4,
}}

// refusedOnce is a policy that retries a refused connection only as a
// request's first retry. A refused connection is the host's answer that
// nothing listens there, not a failure on the way: a registry that is
// down (when the run starts, or since) costs an operation two connection
// attempts one backoff apart (about 250 ms), not the four retries' 4 s
// and more, while a registry restarting within that backoff is still
// reached. Failures that may pass mid-transfer keep their retries.
type refusedOnce struct{ retry.Policy }

func (p refusedOnce) Retry(attempt int, resp *http.Response, err error) (time.Duration, error) {
	if attempt >= 1 && refused(err) {
		return -1, nil
	}
	return p.Policy.Retry(attempt, resp, err)
}

// refused reports whether err is a refused connection.
func refused(err error) bool { return err != nil && errors.Is(err, syscall.ECONNREFUSED) }

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
	return scrub(fmt.Errorf("%s: %s: %w", s.location, doing, err))
}

func hasCode(resp *errcode.ErrorResponse, code string) bool {
	for _, e := range resp.Errors {
		if e.Code == code {
			return true
		}
	}
	return false
}
