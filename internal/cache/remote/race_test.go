package remote

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// Two runners push one key at once, without replace. S3: exactly one
// pushes (the record's conditional write), and its entry is the one
// there. OCI: the registry API has no conditional tag, so both may push
// (oci.go's Put says why that is harmless); at least one does, and the
// key holds one of the two entries, whole.
func TestConcurrentPutsOfOneKey(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		key := keyOf("race")
		files := []Upload{testFile(t, "engine", 4<<20, 21), testFile(t, "engine", 4<<20, 22)}
		stores := []Store{fx.open(t, fx.url), fx.open(t, fx.url)}
		for _, s := range stores { // connections made, so the race is the Puts'
			if _, err := s.Has(context.Background(), key); err != nil {
				t.Fatal(err)
			}
		}
		pushed := make([]bool, 2)
		errs := make([]error, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range stores {
			wg.Go(func() {
				<-start
				pushed[i], errs[i] = stores[i].Put(context.Background(), key, testMeta(key), files[i:i+1], false)
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		e, err := stores[0].Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		winner := -1
		for i, f := range files {
			if e.Files[0] == f.File {
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("the entry's file %+v is neither runner's", e.Files[0])
		}
		got, err := readAll(t, stores[0], key, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, got, files[winner])
		t.Logf("pushed %v; the entry is runner %d's", pushed, winner)
		switch fx.kind {
		case "s3":
			if pushed[0] == pushed[1] || !pushed[winner] {
				t.Fatalf("pushed %v with runner %d's entry there; want exactly the winner to have pushed", pushed, winner)
			}
		case "oci":
			if !pushed[0] && !pushed[1] {
				t.Fatalf("neither runner pushed")
			}
		}
	})
}

// One store used by several goroutines at once (a run's pushes go on
// beside its lookups): each key gets its own entry.
func TestOneStoreUsedConcurrently(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		s := fx.open(t, fx.url)
		var wg sync.WaitGroup
		for i := range 4 {
			f := testFile(t, "engine", 2<<20, uint64(30+i))
			key := keyOf(f.SHA256)
			wg.Go(func() {
				if _, err := s.Put(context.Background(), key, testMeta(key), []Upload{f}, false); err != nil {
					t.Error(err)
					return
				}
				got, err := readAll(t, s, key, 0)
				if err != nil {
					t.Error(err)
					return
				}
				sameBytes(t, got, f)
			})
		}
		wg.Wait()
	})
}

// Deleting from a registry that refuses deletion (as GHCR's registry API
// does) is ErrUnsupported; the entry stays.
func TestOCIDeleteUnsupported(t *testing.T) {
	fx := ociFixture(t, remotetest.RegistryOptions{NoDelete: true})
	s := fx.open(t, fx.url)
	key := keyOf("kept")
	put(t, s, key, testFile(t, "engine", 1<<10, 23), false)
	wantErr(t, s.Delete(context.Background(), key), ErrUnsupported)
	if has, err := s.Has(context.Background(), key); err != nil || !has {
		t.Fatalf("after a refused Delete, Has = %v, %v; want true, nil", has, err)
	}
}

// Sweep deletes the blobs no record names, once older than the grace:
// not a blob another entry still has, not a young one.
func TestS3Sweep(t *testing.T) {
	fx := s3Fixture(t)
	s := fx.open(t, fx.url).(*s3Store)
	ctx := context.Background()
	shared := testFile(t, "engine", 1<<20, 24)
	alone := testFile(t, "engine", 2<<20, 25)
	put(t, s, keyOf("a"), shared, false)
	put(t, s, keyOf("b"), shared, false)
	put(t, s, keyOf("c"), alone, false)
	for _, k := range []string{"a", "c"} {
		if err := s.Delete(ctx, keyOf(k)); err != nil {
			t.Fatal(err)
		}
	}
	swept, err := s.Sweep(ctx, time.Hour)
	if err != nil || swept != (Swept{}) {
		t.Fatalf("Sweep with an hour's grace = %+v, %v; want nothing swept", swept, err)
	}
	swept, err = s.Sweep(ctx, -time.Minute) // every blob old enough (the store's clock may lead)
	if err != nil || swept != (Swept{Files: 1, Bytes: alone.Size}) {
		t.Fatalf("Sweep = %+v, %v; want c's blob alone", swept, err)
	}
	got, err := readAll(t, s, keyOf("b"), 0)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, shared)
	if ok, err := s.exists(ctx, s.blobName(alone.SHA256), -1); err != nil || ok {
		t.Fatalf("c's blob: exists = %v, %v after the sweep", ok, err)
	}
}
