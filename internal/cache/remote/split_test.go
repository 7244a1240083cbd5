package remote

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// A file larger than the layer size is pushed as ordered layers of that
// size (1 MiB here, 4 GiB in use), each checked as it is read, and joined
// back into the file; a changed byte in one part's blob is caught.
func TestOCISplitsALargeFileIntoLayers(t *testing.T) {
	fx := ociFixture(t, remotetest.RegistryOptions{})
	s := fx.open(t, fx.URL, func(o *Options) { o.partSize = 1 << 20 })
	key := keyOf("split")
	engine := testFile(t, "engine", 5<<20+123, 3)
	put(t, s, key, engine, false)

	e, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	parts := e.ref.(*ociManifest).parts[0]
	if len(parts) != 6 {
		t.Fatalf("%d layers, want 6 (five of 1 MiB and one of 123 bytes)", len(parts))
	}
	for i, p := range parts[:5] {
		if p.Size != 1<<20 {
			t.Errorf("layer %d: %d bytes, want 1 MiB", i, p.Size)
		}
	}
	if e.Files[0] != engine.File {
		t.Fatalf("Files[0] = %+v, want %+v", e.Files[0], engine.File)
	}
	got, err := readAll(t, s, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, engine)

	// A reader of another store (the default layer size) reads it too:
	// the layout is in the manifest, not in the reader's settings.
	got, err = readAll(t, fx.open(t, fx.URL), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, engine)

	flipByte(t, fx.BlobFile(t, parts[2].Digest.Encoded()), 1000)
	_, err = readAll(t, s, key, 0)
	wantErr(t, err, ErrCorrupt)
	if !strings.Contains(err.Error(), "layer 3 of 6") {
		t.Errorf("the error does not say which layer: %v", err)
	}
}

// A replacement of a file larger than the layer size: layers of at most
// that size again, none of them a blob of the first layout (so a part
// whose bytes were changed in the registry's storage is not named again),
// joined back into the file.
func TestOCIReplacementOfASplitFile(t *testing.T) {
	fx := ociFixture(t, remotetest.RegistryOptions{})
	s := fx.open(t, fx.URL, func(o *Options) { o.partSize = 1 << 20 })
	key := keyOf("split replaced")
	engine := testFile(t, "engine", 3<<20+77, 5)
	put(t, s, key, engine, false)
	first := map[string]bool{}
	for _, blob := range entryBlobs(t, fx, s, key) {
		first[blob] = true
	}
	flipByte(t, entryBlobs(t, fx, s, key)[1], 10)

	put(t, s, key, engine, true)
	e, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for i, p := range e.ref.(*ociManifest).parts[0] {
		if p.Size > 1<<20 || p.Size == 0 {
			t.Errorf("layer %d: %d bytes, want 1 to 1 MiB", i, p.Size)
		}
		if first[fx.BlobFile(t, p.Digest.Encoded())] {
			t.Errorf("layer %d is a blob of the first layout", i)
		}
		sum += p.Size
	}
	if sum != engine.Size {
		t.Errorf("the layers hold %d bytes, want %d", sum, engine.Size)
	}
	got, err := readAll(t, s, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, engine)
}

// An upload above the part size goes as a multipart upload (5 MiB parts
// here, the smallest S3 takes), and reads back whole.
func TestS3UploadsALargeFileInParts(t *testing.T) {
	fx := s3Fixture(t)
	s := fx.open(t, fx.URL, func(o *Options) { o.partSize = 5 << 20 })
	key := keyOf("multipart")
	engine := testFile(t, "engine", 12<<20+5, 4)
	put(t, s, key, engine, false)

	head, err := s.(*s3Store).client.HeadObject(context.Background(), &s3.HeadObjectInput{
		Bucket: aws.String(fx.S3.Bucket), Key: aws.String(s.(*s3Store).blobName(engine.SHA256))})
	if err != nil {
		t.Fatal(err)
	}
	// A multipart upload's ETag ends in -<parts>.
	if etag := aws.ToString(head.ETag); !strings.HasSuffix(strings.Trim(etag, `"`), "-3") {
		t.Errorf("ETag %s is not a 3-part upload's", etag)
	}
	got, err := readAll(t, s, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, engine)
}

// flipByte changes the byte at off of a file in a server's storage, as
// damage or tampering would, keeping its length.
func flipByte(t testing.TB, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// An entry of several files (a build with run:'s engines and outputs):
// each file its own layers, split where it is larger than the layer size
// and titled with its name, the files in order; each read back whole by
// its index, in both stores.
func TestAnEntryOfSeveralFiles(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		s := fx.open(t, fx.URL, func(o *Options) { o.partSize = 5 << 20 })
		key := keyOf("several " + fx.Kind)
		files := []Upload{testFile(t, "engine", 11<<20+7, 5), testFile(t, "engine-2", 3<<20, 6), testFile(t, "output-1", 300, 7)}
		if pushed, err := s.Put(context.Background(), key, testMeta(key), files, false); err != nil || !pushed {
			t.Fatalf("Put = %v, %v", pushed, err)
		}
		e, err := s.Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Files) != 3 {
			t.Fatalf("Get: files %+v", e.Files)
		}
		for i, f := range files {
			if e.Files[i] != f.File {
				t.Errorf("file %d: %+v, want %+v", i, e.Files[i], f.File)
			}
			got, err := readAll(t, s, key, i)
			if err != nil {
				t.Fatal(err)
			}
			sameBytes(t, got, f)
		}
		if fx.Kind != "oci" {
			return
		}
		m := e.ref.(*ociManifest)
		if len(m.parts[0]) != 3 || len(m.parts[1]) != 1 || len(m.parts[2]) != 1 {
			t.Errorf("layers per file: %d, %d, %d; want 3 (11 MiB in parts of 5 MiB), 1, 1", len(m.parts[0]), len(m.parts[1]), len(m.parts[2]))
		}
		for i, l := range m.manifest.Layers {
			if title := l.Annotations["org.opencontainers.image.title"]; !strings.HasPrefix(title, "engine") && title != "output-1" {
				t.Errorf("layer %d is titled %q", i, title)
			}
		}
	})
}
