package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// Bytes changed in the server's storage under their name (the registry
// serves them under their old digest without hashing them again): Open's
// reader fails with ErrCorrupt at the end; cut short there, with
// ErrCorrupt at once, the server serving another length.
func TestPoisonedBlob(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		s := fx.open(t, fx.URL)
		key := keyOf("poisoned")
		engine := testFile(t, "engine", 8<<20, 16)
		put(t, s, key, engine, false)
		flipByte(t, fx.BlobFile(t, engine.SHA256), 5<<20)
		got, err := readAll(t, s, key, 0)
		wantErr(t, err, ErrCorrupt)
		if int64(len(got)) != engine.Size {
			t.Errorf("read %d bytes before the error, want all %d (the digest is known at the end)", len(got), engine.Size)
		}
		if !strings.Contains(err.Error(), "SHA-256") {
			t.Errorf("the error does not say the digest differs: %v", err)
		}

		if err := os.Truncate(fx.BlobFile(t, engine.SHA256), engine.Size-10); err != nil {
			t.Fatal(err)
		}
		_, err = readAll(t, s, key, 0)
		wantErr(t, err, ErrCorrupt)
	})
}

// The rebuild's replacement mends an entry whose blob bytes were changed
// in the server's storage (the length kept: a store that looks at sizes
// alone sees nothing), and so does a replacement of the replacement. S3:
// a replacing Put uploads its files even where their names are there. A
// registry keeps the bytes it has under a digest whatever is uploaded
// under it again: a replacing Put lays the file out in new layers.
func TestReplacementMendsAPoisonedBlob(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		s := fx.open(t, fx.URL)
		key := keyOf("mended")
		engine := testFile(t, "engine", 3<<20, 26)
		put(t, s, key, engine, false)
		for round := range 2 {
			for _, blob := range entryBlobs(t, fx, s, key) {
				flipByte(t, blob, 100)
			}
			_, err := readAll(t, s, key, 0)
			wantErr(t, err, ErrCorrupt)
			if !put(t, s, key, engine, true) {
				t.Fatalf("round %d: the replacing Put pushed nothing", round)
			}
			got, err := readAll(t, fx.open(t, fx.URL), key, 0)
			if err != nil {
				t.Fatalf("round %d: after the replacement: %v", round, err)
			}
			sameBytes(t, got, engine)
		}
	})
}

// entryBlobs are the files of the server's storage that hold key's
// engine: its layers' blobs (OCI), its blob (S3).
func entryBlobs(t testing.TB, fx *fixture, s Store, key string) []string {
	t.Helper()
	e, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := e.ref.(*ociManifest)
	if !ok {
		return []string{fx.BlobFile(t, e.Files[0].SHA256)}
	}
	var files []string
	for _, l := range m.parts[0] {
		files = append(files, fx.BlobFile(t, l.Digest.Encoded()))
	}
	return files
}

// A manifest that lies: about a file's size (its layers do not add up),
// about a one-layer file's SHA-256, about a layer's size (the registry
// serves another length); of another artifact type; with 100 MB of
// metadata, refused by its descriptor before a byte of it is fetched.
func TestOCILyingManifests(t *testing.T) {
	fx := ociFixture(t, remotetest.RegistryOptions{})
	p := remotetest.StartProxy(t, fx.Target)
	s := fx.open(t, fx.Via(p.Addr)).(*ociStore)
	ctx := context.Background()
	engine := testFile(t, "engine", 1<<20, 17)
	key := keyOf("true")
	put(t, s, key, engine, false)
	good := fetchManifest(t, s, key)

	lies := map[string]func(m *ocispec.Manifest){
		"file size": func(m *ocispec.Manifest) { m.Layers[0].Annotations[ociFileSizeAnnotation] = "1048577" },
		"file hash": func(m *ocispec.Manifest) { m.Layers[0].Annotations[ociFileSHAAnnotation] = keyOf("other") },
		"type":      func(m *ocispec.Manifest) { m.ArtifactType = "application/vnd.example.other" },
	}
	for name, lie := range lies {
		m := good
		m.Layers = []ocispec.Descriptor{good.Layers[0]}
		m.Layers[0].Annotations = map[string]string{}
		for k, v := range good.Layers[0].Annotations {
			m.Layers[0].Annotations[k] = v
		}
		lie(&m)
		k := keyOf(name)
		pushManifest(t, s, k, m)
		_, err := s.Get(ctx, k)
		wantErr(t, err, ErrCorrupt)
		t.Logf("%s: %v", name, err)
	}

	// A layer's size: the sizes agree with each other, not with the blob.
	m := good
	m.Layers = []ocispec.Descriptor{good.Layers[0]}
	m.Layers[0].Size++
	m.Layers[0].Annotations = map[string]string{ocispec.AnnotationTitle: "engine",
		ociFileSizeAnnotation: "1048577", ociFileSHAAnnotation: engine.SHA256}
	k := keyOf("layer size")
	if err := pushManifestErr(s, k, m); err != nil { // a registry may refuse it: then it cannot lie
		t.Logf("layer size: the registry refuses the manifest: %v", err)
	} else {
		_, err := readAll(t, s, k, 0)
		wantErr(t, err, ErrCorrupt)
		t.Logf("layer size: %v", err)
	}

	// 100 MB of metadata: the blob is there, and never fetched.
	big := bytes.Repeat([]byte("x"), 100<<20)
	config := ocispec.Descriptor{MediaType: ociMetaType, Digest: digest.FromBytes(big), Size: int64(len(big))}
	repo, err := s.repository(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Blobs().Push(ctx, config, bytes.NewReader(big)); err != nil {
		t.Fatal(err)
	}
	m = good
	m.Config = config
	k = keyOf("big metadata")
	pushManifest(t, s, k, m)
	before := p.FromServer()
	_, err = s.Get(ctx, k)
	wantErr(t, err, ErrCorrupt)
	if read := p.FromServer() - before; read > 64<<10 {
		t.Errorf("%d bytes came from the registry for a Get refusing 100 MB of metadata", read)
	}
}

// A record that lies: about a file's size, about its SHA-256 (naming a
// blob whose bytes have another, or none); 100 MB long (refused with at most the bound
// read); of another format.
func TestS3LyingRecords(t *testing.T) {
	fx := s3Fixture(t)
	p := remotetest.StartProxy(t, fx.Target)
	s := fx.open(t, fx.Via(p.Addr)).(*s3Store)
	ctx := context.Background()
	engine := testFile(t, "engine", 1<<20, 18)
	key := keyOf("true")
	put(t, s, key, engine, false)

	// The blob named by a hash its bytes do not have.
	b := make([]byte, engine.Size)
	engine.Body.ReadAt(b, 0)
	writeObject(t, s, s.blobName(keyOf("fake")), b)
	lies := map[string]func(r *s3Record){
		"size":          func(r *s3Record) { r.Files[0].Size++ },
		"hash":          func(r *s3Record) { r.Files[0].SHA256 = keyOf("fake") },
		"missing blob":  func(r *s3Record) { r.Files[0].SHA256 = keyOf("nothing") },
		"repeated name": func(r *s3Record) { r.Files = append(r.Files, r.Files[0]) },
		"format":        func(r *s3Record) { r.Format++ },
	}
	for name, lie := range lies {
		r := s3Record{Format: FormatVersion, Key: key, Meta: testMeta(key), Files: []s3File{s3File(engine.File)}}
		lie(&r)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		k := keyOf(name)
		writeObject(t, s, s.recordName(k), b)
		_, err = readAll(t, s, k, 0)
		wantErr(t, err, ErrCorrupt)
		t.Logf("%s: %v", name, err)
	}

	k := keyOf("big record")
	writeObject(t, s, s.recordName(k), bytes.Repeat([]byte(" "), 100<<20))
	before := p.FromServer()
	_, err := s.Get(ctx, k)
	wantErr(t, err, ErrCorrupt)
	if read := p.FromServer() - before; read > maxRecordBytes+64<<10 {
		t.Errorf("%d bytes came from the store for a Get refusing a 100 MB record", read)
	}
}

// Another key's entry under this key's tag or record: Get returns it as it
// is, with that other key as Entry.Key, for the caller's check to refuse.
func TestAnotherKeysEntry(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		s := fx.open(t, fx.URL)
		mine, theirs := keyOf("mine"), keyOf("theirs")
		engine := testFile(t, "engine", 1<<20, 20)
		put(t, s, theirs, engine, false)
		switch st := s.(type) {
		case *ociStore:
			m := fetchManifest(t, st, theirs)
			pushManifest(t, st, mine, m)
		case *s3Store:
			out, err := st.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &st.bucket, Key: aws.String(st.recordName(theirs))})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(out.Body)
			out.Body.Close()
			writeObject(t, st, st.recordName(mine), b)
		}
		e, err := s.Get(context.Background(), mine)
		if err != nil {
			t.Fatal(err)
		}
		if e.Key != theirs || string(e.Meta) != string(testMeta(theirs)) {
			t.Fatalf("Get(mine) = key %s, meta %q; want theirs as it is", e.Key, e.Meta)
		}
	})
}

// fetchManifest is key's manifest, parsed.
func fetchManifest(t testing.TB, s *ociStore, key string) ocispec.Manifest {
	t.Helper()
	ctx := context.Background()
	repo, err := s.repository(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.manifest(ctx, repo, key)
	if err != nil {
		t.Fatal(err)
	}
	return m.manifest
}

// pushManifest tags m with key, as a store's misbehaving writer would.
func pushManifest(t testing.TB, s *ociStore, key string, m ocispec.Manifest) {
	t.Helper()
	if err := pushManifestErr(s, key, m); err != nil {
		t.Fatal(err)
	}
}

func pushManifestErr(s *ociStore, key string, m ocispec.Manifest) error {
	ctx := context.Background()
	repo, err := s.repository(ctx)
	if err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(b), Size: int64(len(b))}
	return repo.PushReference(ctx, desc, bytes.NewReader(b), key)
}

// writeObject writes an object as a store's misbehaving writer would.
func writeObject(t testing.TB, s *s3Store, name string, b []byte) {
	t.Helper()
	_, err := s.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &s.bucket, Key: &name, Body: bytes.NewReader(b)})
	if err != nil {
		t.Fatal(err)
	}
}

// What a refusal quotes of the store's text is cut short: a manifest (up
// to 256 KiB) or a record (over 1 MiB) may carry a string of that length
// in any field, and the refusal is a build's warning in every view and
// the report.
func TestRefusalsCutTheStoresText(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	check := func(t *testing.T, name string, err error) {
		t.Helper()
		wantErr(t, err, ErrCorrupt)
		if n := len(err.Error()); n > 1<<10 {
			t.Errorf("%s: a refusal of %d bytes: %.300s…", name, n, err)
		}
	}
	t.Run("oci", func(t *testing.T) {
		fx := ociFixture(t, remotetest.RegistryOptions{})
		s := fx.open(t, fx.URL).(*ociStore)
		key := keyOf("true")
		put(t, s, key, testFile(t, "engine", 1<<10, 31), false)
		good := fetchManifest(t, s, key)
		lies := map[string]func(m *ocispec.Manifest){
			"artifact type": func(m *ocispec.Manifest) { m.ArtifactType = long },
			"config type":   func(m *ocispec.Manifest) { m.Config.MediaType = long },
			"layer type":    func(m *ocispec.Manifest) { m.Layers[0].MediaType = long },
			"file name": func(m *ocispec.Manifest) {
				second := m.Layers[0]
				second.Annotations = maps.Clone(second.Annotations)
				m.Layers = append(m.Layers, second)
				m.Layers[0].Annotations[ociFileSizeAnnotation] = "1"
				m.Layers[0].Annotations[ocispec.AnnotationTitle] = long
			},
			"file hash": func(m *ocispec.Manifest) { m.Layers[0].Annotations[ociFileSHAAnnotation] = long },
		}
		for name, lie := range lies {
			m := good
			m.Layers = []ocispec.Descriptor{good.Layers[0]}
			m.Layers[0].Annotations = maps.Clone(good.Layers[0].Annotations)
			lie(&m)
			k := keyOf(name)
			pushManifest(t, s, k, m)
			_, err := s.Get(context.Background(), k)
			check(t, name, err)
		}
	})
	t.Run("s3", func(t *testing.T) {
		fx := s3Fixture(t)
		s := fx.open(t, fx.URL).(*s3Store)
		engine := testFile(t, "engine", 1<<10, 32)
		lies := map[string]string{
			"key":           fmt.Sprintf(`{"format":%d,"key":%q,"meta":"e30=","files":[]}`, FormatVersion, long),
			"unknown field": fmt.Sprintf(`{"format":%d,%q:1}`, FormatVersion, long),
			"file name": fmt.Sprintf(`{"format":%d,"key":%q,"meta":"e30=","files":[{"name":"","size":1,"sha256":%q},{"name":"","size":1,"sha256":%q}]}`,
				FormatVersion, keyOf("x"), engine.SHA256, engine.SHA256),
			"file hash": fmt.Sprintf(`{"format":%d,"key":%q,"meta":"e30=","files":[{"name":"engine","size":1,"sha256":%q}]}`,
				FormatVersion, keyOf("x"), long),
		}
		lies["file name"] = strings.Replace(lies["file name"], `"name":""`, `"name":"`+long+`"`, 2)
		for name, record := range lies {
			k := keyOf(name)
			writeObject(t, s, s.recordName(k), []byte(record))
			_, err := s.Get(context.Background(), k)
			check(t, name, err)
		}
	})
}
