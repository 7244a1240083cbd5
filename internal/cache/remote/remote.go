// Package remote is the engine cache's shared tier: a store of cache
// entries that every runner of a fleet reads and writes, behind the local
// cache folder (internal/cache), so that an engine is built once for the
// whole fleet. Stores are named by URL, and each URL scheme is one entry of
// a registry (schemes.go), as internal/backend keeps its backends:
//
//	oci://HOST[:PORT]/REPOSITORY                     an OCI registry (oci.go)
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=R]    an S3-compatible store (s3.go)
//
// A store holds, per key, the local entry's metadata file (entry.json, the
// bytes internal/cache writes, at most MaxMetaBytes) and the entry's files
// in order (the engines, then a build with run:'s other files; format 2
// entries had one, the engine). It knows nothing of what the metadata
// means: internal/cache parses and checks it as strictly as a local
// entry's. What a store returns is untrusted input: Open's readers check
// every byte against the size and SHA-256 the entry names and fail at the
// end of a stream that does not match, and Get bounds what it reads.
//
// # What an entry is in each store
//
// In an OCI registry (oci.go), key K is one artifact, an OCI image
// manifest tagged K:
//
//	artifactType  application/vnd.trt-action.cache.entry.v<FormatVersion>
//	config        the metadata bytes, media type
//	              application/vnd.trt-action.cache.metadata.v<FormatVersion>+json
//	layers        each file, in order: one layer (media type
//	              application/vnd.trt-action.cache.file) whose digest is
//	              the file's SHA-256, or, above 4 GiB, ordered layers of
//	              4 GiB (the last shorter), so registries that limit a
//	              layer's size take any engine; a replacement's file is
//	              ordered layers of at most 4 GiB cut at a random place
//	              (ociput.go says why); every layer's annotations
//	              name its file (org.opencontainers.image.title) and the
//	              whole file's size and SHA-256
//	              (com.github.trt-action.cache.file.size, .sha256)
//	annotations   org.opencontainers.image.created (the upload time, RFC
//	              3339), com.github.trt-action.cache.key (K) and
//	              com.github.trt-action.cache.push (random text of the
//	              Put that pushed it)
//
// The manifest is pushed by its tag after its blobs, so the tag names a
// whole entry or none. A deletion deletes the manifest; its blobs stay
// until the registry's garbage collection.
//
// In an S3 bucket (s3.go), under s3://BUCKET/PREFIX/v<FormatVersion>/:
//
//	blobs/sha256/HEX   each file, named by its SHA-256 (files several
//	                   entries share are stored once)
//	entries/K          K's record, JSON: {"format": <FormatVersion>,
//	                   "key": K, "meta": the metadata in base64,
//	                   "files": [{"name", "size", "sha256"}]}; written
//	                   last, with If-None-Match: * unless replacing
//
// A deletion deletes the record; Sweep (Sweeper) deletes the blobs no
// record names.
//
// # Two runners pushing one key
//
// One entry stays, and only the runner whose entry it is reports pushed.
// S3 writes the record with If-None-Match: *, so exactly one of two Puts
// writes it. A registry has no conditional tag: a Put looks at the tag,
// finds none, and tags, and two Puts that both looked before either
// tagged both tag; the tag that lands last stays. So an OCI Put, after
// its tag, waits (settleDelay: twice its own tag request's time, at least
// 1 s, at most 10 s) and resolves the tag again: pushed only when the tag
// still names its own manifest. The window left: a racing Put whose tag
// lands more than that wait after this one's, having looked before this
// one's landed (its tag request took longer than the wait from its look:
// a registry far slower for that runner than for this one, or its tag
// request retried after a 5xx or a reset). This Put then saw its own tag
// and reported pushed, and so does the other, whose entry is the one that
// stays. Nothing is lost: every entry tagged is whole and right for its
// key (a key names everything that decides the engine), a reader that
// resolved the earlier manifest still reads it whole (blobs outlive their
// tags), and that manifest, with the blobs no other names, stays untagged
// until the registry's garbage collection. A replacing Put (--rebuild)
// that lands within a Put's wait is a later write: that Put reports false.
//
// The package imports nothing of trt-action's but internal/text, so
// internal/cache, which holds the tier logic (a pull written to the
// local staging folder and the engine path in one pass, backfill, push),
// can use it.
package remote

import (
	"context"
	"errors"
	"io"
	"net"
	"time"
)

// Store is one shared store of cache entries.
type Store interface {
	// Location is the store's URL as given, without credentials: for
	// messages, the report and cache ls. Never holds a secret.
	Location() string
	// Get looks key up and returns its entry: the metadata bytes and the
	// files' names, sizes and SHA-256 digests as the store's own records
	// (OCI descriptors, the S3 manifest object) give them. ErrNotFound
	// when the store has no entry for key. Nothing is trusted yet: the
	// caller checks Meta against the key, the format version and Files.
	Get(ctx context.Context, key string) (*Entry, error)
	// Open streams file i of an entry Get returned. The reader returns
	// an error wrapping ErrCorrupt at the end of the stream (before
	// io.EOF) when the bytes read differ from Files[i]'s size or SHA-256,
	// so a caller that writes what it reads commits nothing unchecked.
	Open(ctx context.Context, e *Entry, i int) (io.ReadCloser, error)
	// Has reports whether key has an entry, with one request.
	Has(ctx context.Context, key string) (bool, error)
	// Put uploads an entry: its files first (content-addressed: bytes the
	// store has already are not sent again, except by a replacement), the
	// record that makes key an entry last, so a reader never sees part of
	// one. Without replace, an entry already there for key stays and Put
	// returns false, nil; with replace, the new entry takes its place in
	// one write. Of two Puts of one key at once, one pushes (see "Two
	// runners pushing one key" above).
	Put(ctx context.Context, key string, meta []byte, files []Upload, replace bool) (pushed bool, err error)
	// List calls fn for every entry of the store, in no set order.
	List(ctx context.Context, fn func(Listed) error) error
	// Delete removes key's entry (and what only it used, where the store
	// can tell). ErrUnsupported when the store does not allow deletion.
	Delete(ctx context.Context, key string) error
}

// Sweeper is a store whose Delete removes an entry's record but leaves its
// files, which other entries may share (the S3 store: files are stored by
// content, and several keys may have the same engine). Sweep removes the
// files that no entry names and that were stored more than grace ago;
// prune --remote calls it after its deletions. The grace keeps the files
// of a Put still in progress (uploaded, its record not yet written).
type Sweeper interface {
	Sweep(ctx context.Context, grace time.Duration) (Swept, error)
}

// Swept is what a Sweep removed.
type Swept struct {
	Files int
	Bytes int64
}

// SweepGrace is the grace a sweep gives files no entry names yet: far
// longer than any upload of an entry's files takes.
const SweepGrace = 24 * time.Hour

// FormatVersion is the cache format whose entries a store reads and
// writes: it names the S3 layout's folder and the OCI artifact's type, so
// entries of another format are never read. It must equal
// internal/cache.FormatVersion (which this package cannot import); a test
// there holds them equal.
const FormatVersion = 3

// Entry is one entry as a store holds it.
type Entry struct {
	Key      string
	Meta     []byte    // the local entry's metadata file, at most MaxMetaBytes
	Files    []File    // in order; Files[0] is the (first) engine
	Uploaded time.Time // when the entry was put in the store (zero when the store does not say)
	// ref is the store's own handle of what Get read (an OCI manifest's
	// descriptor, an S3 object's ETag), so Open reads the entry Get saw.
	ref any
}

// File is one file of an entry.
type File struct {
	Name   string // "engine", "engine-2", "output-1": internal/cache names them
	Size   int64
	SHA256 string // 64 lowercase hex digits
}

// Upload is one file to put: its name, size and SHA-256 (the local entry's,
// checked when it was stored) and its bytes. Body is read from offset 0 to
// Size, possibly in parallel parts and more than once (a retried part).
type Upload struct {
	File
	Body io.ReaderAt
}

// Listed is one entry as List finds it: what cache ls --remote shows and
// prune --remote decides by.
type Listed struct {
	Key      string
	Size     int64     // the files' bytes, as the store's records give them
	Uploaded time.Time // when it was put in the store
	Meta     []byte    // the metadata bytes, for the build name, library and GPU; nil when unreadable
}

// MaxMetaBytes bounds an entry's metadata as a store serves it: a local
// entry's is a few kilobytes (the original build's phase tree); more is
// not ours, and is refused unread.
const MaxMetaBytes = 1 << 20

// Mode is what a run may do with a store.
type Mode string

const (
	ReadWrite Mode = "read-write" // look up, and push what this run built or had locally
	ReadOnly  Mode = "read-only"  // look up only
)

// Errors a store's methods wrap, so callers can tell them apart.
var (
	// ErrNotFound: the store has no entry for the key (a miss).
	ErrNotFound = errors.New("no such entry in the store")
	// ErrCorrupt: what the store served differs from what its own records
	// say (a digest, a size, a bound): untrusted content, refused.
	ErrCorrupt = errors.New("the store's content does not match its records")
	// ErrUnsupported: the store does not allow the operation (deletion).
	ErrUnsupported = errors.New("not supported by this store")
	// ErrAuth: the store refused the credentials, or asked for some and
	// none were found.
	ErrAuth = errors.New("the store refused the credentials")
	// ErrStalled: a transfer moved no bytes for Options.Stall and was
	// abandoned (watchdog.go).
	ErrStalled = errors.New("the transfer stalled")
)

// Options are what opening a store takes from its surroundings.
type Options struct {
	// Getenv reads the environment (os.Getenv in use): DOCKER_CONFIG,
	// SSL_CERT_FILE, GITHUB_ACTIONS and GITHUB_TOKEN for ghcr.io, the AWS
	// SDK's variables. A test gives its own.
	Getenv func(string) string
	// Stall is how long a transfer may move no bytes before it is
	// abandoned (DefaultStall when 0): a store that stops answering costs
	// a build at most this much before it runs.
	Stall time.Duration

	// partSize is the largest piece of a file one request carries: an
	// OCI layer (maxLayerBytes when 0), an S3 multipart part and the size
	// above which an upload is multipart (the SDK's defaults when 0).
	// Only this package's tests set it, to split a few MiB for real.
	partSize int64
	// dial is the transport's dialer (net.Dialer's when nil): this
	// package's tests wrap the real one to count connection attempts.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DefaultStall is Options.Stall's default.
const DefaultStall = 30 * time.Second
