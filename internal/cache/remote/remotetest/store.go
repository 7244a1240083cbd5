package remotetest

import (
	"path/filepath"
	"strings"
	"testing"
)

// Store is a shared store of either kind on a server of its own, as the
// tests of the shared engine cache use one (internal/cache/remote,
// internal/cache, internal/build, test/realbuild): its URL and what a
// client needs to open it, where a proxy in front of it goes, and the
// server's file of a blob, which a test changes as failing storage would.
// Opening the store is the caller's (remote.Open with Env.Getenv): this
// package imports nothing of the store's, so remote's own tests can use
// it.
type Store struct {
	Kind     string    // "oci" or "s3"
	URL      string    // the store, served directly
	Env      Env       // what a client needs: the S3 gateway's keys, nothing for the registry
	Target   string    // the server's HOST:PORT, for a proxy in front of it
	Registry *Registry // the server of an "oci" store; nil for "s3"
	S3       *S3       // the server of an "s3" store; nil for "oci"
	path     string    // the registry's repository, or the prefix in the bucket
}

// The store's place on its server: a repository, a prefix of two parts
// (so a prefix with a / in it is what every test has).
const (
	storeRepository = "trt/engines"
	storePrefix     = "team/engines"
)

// StartOCIStore starts a registry as o says and is its repository's store.
func StartOCIStore(t testing.TB, o RegistryOptions) *Store {
	t.Helper()
	r := StartRegistry(t, o)
	return &Store{Kind: "oci", URL: r.URL(storeRepository), Env: r.Env(), Target: r.Host, Registry: r, path: storeRepository}
}

// StartS3Store starts an S3 gateway as o says and is a prefix of its
// bucket.
func StartS3Store(t testing.TB, o S3Options) *Store {
	t.Helper()
	s := StartS3(t, o)
	return &Store{Kind: "s3", URL: s.URL(storePrefix, s.Endpoint), Env: s.Env(),
		Target: s.Endpoint[strings.Index(s.Endpoint, "://")+3:], S3: s, path: storePrefix}
}

// StartStore starts a store of kind ("oci", "s3") as its server serves by
// default: a plain registry, an S3 gateway over HTTP.
func StartStore(t testing.TB, kind string) *Store {
	t.Helper()
	switch kind {
	case "oci":
		return StartOCIStore(t, RegistryOptions{})
	case "s3":
		return StartS3Store(t, S3Options{})
	}
	t.Fatalf("no store of kind %q", kind)
	return nil
}

// StoreKinds are the kinds of store, in the order EachStore runs them.
var StoreKinds = []string{"oci", "s3"}

// EachStore runs f as a subtest for each kind of store, on a server of its
// own.
func EachStore(t *testing.T, f func(t *testing.T, st *Store)) {
	for _, kind := range StoreKinds {
		t.Run(kind, func(t *testing.T) { f(t, StartStore(t, kind)) })
	}
}

// Via is the URL of the same store through a proxy at addr (HOST:PORT) in
// front of its server.
func (st *Store) Via(addr string) string {
	if st.S3 != nil {
		return st.S3.URL(st.path, "http://"+addr)
	}
	return "oci://" + addr + "/" + st.path
}

// Kill kills the server as a crash would.
func (st *Store) Kill(t testing.TB) {
	t.Helper()
	if st.S3 != nil {
		st.S3.Kill(t)
		return
	}
	st.Registry.Kill(t)
}

// Restart starts a killed server again, on its port and storage.
func (st *Store) Restart(t testing.TB) {
	t.Helper()
	if st.S3 != nil {
		st.S3.Restart(t)
		return
	}
	st.Registry.Restart(t)
}

// BlobFile is the file of the server's storage that holds the blob whose
// SHA-256 is sum (hex): a registry's blob (a layer: a whole file, or a
// part of one), or an S3 store's object of a file, which the store keeps
// under blobs/sha256/ in its format's folder (found there, so this
// package need not know the format's number). The blob must be there.
func (st *Store) BlobFile(t testing.TB, sum string) string {
	t.Helper()
	if st.S3 == nil {
		return st.Registry.BlobFile(sum)
	}
	pattern := st.S3.ObjectFile(st.path + "/v*/blobs/sha256/" + sum)
	found, err := filepath.Glob(pattern)
	if err != nil || len(found) != 1 {
		t.Fatalf("the S3 store's blob %s: %s matches %v (%v), want one file", sum, pattern, found, err)
	}
	return found[0]
}
