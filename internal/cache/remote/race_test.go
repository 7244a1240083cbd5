package remote

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// Two runners push one key at once, without replace: exactly one pushes,
// and its entry is the one there, whole (S3: the record's conditional
// write; OCI: the tag resolved again once the race has settled).
func TestConcurrentPutsOfOneKey(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		key := keyOf("race")
		files := []Upload{testFile(t, "engine", 4<<20, 21), testFile(t, "engine", 4<<20, 22)}
		stores := []Store{fx.open(t, fx.URL), fx.open(t, fx.URL)}
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
		if pushed[0] == pushed[1] || !pushed[winner] {
			t.Fatalf("pushed %v with runner %d's entry there; want exactly the winner to have pushed", pushed, winner)
		}
	})
}

// Two OCI Puts of one key in the order the registry API cannot tell
// apart at the time: A finds no tag, B finds no tag and tags, A tags over
// B's tag. Only A reports pushed, and A's entry is there; so too when
// both push the same entry (the same bytes and metadata).
func TestOCIPutsRacingInTheWorstOrder(t *testing.T) {
	for _, same := range []bool{false, true} {
		t.Run(map[bool]string{false: "two entries", true: "one entry twice"}[same], func(t *testing.T) {
			fx := ociFixture(t, remotetest.RegistryOptions{})
			a, b := fx.open(t, fx.URL).(*ociStore), fx.open(t, fx.URL).(*ociStore)
			key := keyOf("worst order")
			fa := testFile(t, "engine", 2<<20, 41)
			fb := fa
			if !same {
				fb = testFile(t, "engine", 2<<20, 42)
			}
			aLooked, bTagged, aTagged := make(chan struct{}), make(chan struct{}), make(chan struct{})
			a.beforeTag = func() { close(aLooked); await(bTagged) }
			a.afterTag = func() { close(aTagged) }
			b.afterTag = func() { close(bTagged); await(aTagged) }

			var pushedA bool
			var errA error
			done := make(chan struct{})
			go func() {
				defer close(done)
				pushedA, errA = a.Put(context.Background(), key, testMeta(key), []Upload{fa}, false)
			}()
			if !await(aLooked) {
				t.Fatal("A never reached its tag")
			}
			pushedB, errB := b.Put(context.Background(), key, testMeta(key), []Upload{fb}, false)
			<-done
			if errA != nil || errB != nil {
				t.Fatalf("A: %v; B: %v", errA, errB)
			}
			if !pushedA || pushedB {
				t.Fatalf("pushed: A %v, B %v; want A alone, whose tag landed last", pushedA, pushedB)
			}
			got, err := readAll(t, b, key, 0)
			if err != nil {
				t.Fatal(err)
			}
			sameBytes(t, got, fa)
		})
	}
}

// await waits for ch to close, or gives up after failWithin (a test's
// pause that is never released fails the test instead of hanging it).
func await(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(failWithin):
		return false
	}
}

// One store used by several goroutines at once (a run's pushes go on
// beside its lookups): each key gets its own entry.
func TestOneStoreUsedConcurrently(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		s := fx.open(t, fx.URL)
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
	s := fx.open(t, fx.URL)
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
	s := fx.open(t, fx.URL).(*s3Store)
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
