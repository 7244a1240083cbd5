package remote

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// A round trip of tens of MB through each store: Put, Has, Get, Open,
// List, a Put that finds the entry (pushed false), a replacement, Delete,
// and the misses after it.
func TestRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		ctx := context.Background()
		s := fx.open(t, fx.URL)
		key := keyOf("round trip")
		engine := testFile(t, "engine", 24<<20+7, 1)
		if has, err := s.Has(ctx, key); err != nil || has {
			t.Fatalf("Has before Put = %v, %v; want false, nil", has, err)
		}
		_, err := s.Get(ctx, key)
		wantErr(t, err, ErrNotFound)
		before := time.Now().Add(-2 * time.Second)
		if !put(t, s, key, engine, false) {
			t.Fatal("the first Put pushed nothing")
		}
		if has, err := s.Has(ctx, key); err != nil || !has {
			t.Fatalf("Has after Put = %v, %v; want true, nil", has, err)
		}
		e, err := s.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if e.Key != key || string(e.Meta) != string(testMeta(key)) || len(e.Files) != 1 || e.Files[0] != engine.File {
			t.Fatalf("Get = key %s, meta %q, files %+v; want %s, %q, [%+v]", e.Key, e.Meta, e.Files, key, testMeta(key), engine.File)
		}
		if e.Uploaded.Before(before) || e.Uploaded.After(time.Now().Add(2*time.Second)) {
			t.Errorf("Uploaded = %s, not the time of the Put", e.Uploaded)
		}
		got, err := readAll(t, s, key, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, got, engine)

		var listed []Listed
		if err := s.List(ctx, func(l Listed) error { listed = append(listed, l); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(listed) != 1 || listed[0].Key != key || listed[0].Size != engine.Size ||
			string(listed[0].Meta) != string(testMeta(key)) || listed[0].Uploaded.Before(before) {
			t.Fatalf("List = %+v; want the one entry", listed)
		}

		if put(t, s, key, engine, false) {
			t.Error("a Put without replace over an entry pushed")
		}
		other := testFile(t, "engine", 3<<20, 2)
		if !put(t, s, key, other, true) {
			t.Error("a Put with replace pushed nothing")
		}
		got, err = readAll(t, s, key, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, got, other)

		if err := s.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if has, err := s.Has(ctx, key); err != nil || has {
			t.Fatalf("Has after Delete = %v, %v; want false, nil", has, err)
		}
		_, err = s.Get(ctx, key)
		wantErr(t, err, ErrNotFound)
		wantErr(t, s.Delete(ctx, key), ErrNotFound)
	})
}

// A registry on this machine is tried with HTTPS first: one that does not
// speak TLS is spoken to in plain HTTP (127.0.0.1 and localhost alike),
// one that does stays on HTTPS.
func TestLoopbackFallsBackToPlainHTTP(t *testing.T) {
	plain := remotetest.StartRegistry(t, remotetest.RegistryOptions{})
	tls := remotetest.StartRegistry(t, remotetest.RegistryOptions{TLS: true})
	_, port, _ := strings.Cut(plain.Host, ":")
	for _, c := range []struct {
		url       string
		env       remotetest.Env
		wantPlain bool
	}{
		{plain.URL("trt/cache"), plain.Env(), true},
		{"oci://localhost:" + port + "/trt/cache", plain.Env(), true},
		{tls.URL("trt/cache"), tls.Env(), false},
	} {
		s, err := Open(context.Background(), c.url, Options{Getenv: c.env.Getenv})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Has(context.Background(), keyOf("fallback")); err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if o := s.(*ociStore); !o.decided || o.plain != c.wantPlain {
			t.Errorf("%s: plain HTTP = %v (decided %v), want %v", c.url, o.plain, o.decided, c.wantPlain)
		}
	}
}

// A store with no entries yet (a repository the registry has never seen,
// a prefix with no objects) lists none, without an error.
func TestListOfAnEmptyStore(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		n := 0
		if err := fx.open(t, fx.URL).List(context.Background(), func(Listed) error { n++; return nil }); err != nil || n != 0 {
			t.Fatalf("List = %d entries, %v; want none, nil", n, err)
		}
	})
}

// A listing of many entries (looked up several at a time) finds each once;
// an error of the caller's function stops it and comes back as it is.
func TestListManyEntries(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		s := fx.open(t, fx.URL)
		want := map[string]int64{}
		for i := range 20 {
			key := keyOf(fmt.Sprint("many ", i))
			f := testFile(t, "engine", int64(1000+i), uint64(100+i))
			put(t, s, key, f, false)
			want[key] = f.Size
		}
		got := map[string]int64{}
		err := s.List(context.Background(), func(l Listed) error {
			if _, seen := got[l.Key]; seen {
				t.Errorf("%s listed twice", l.Key)
			}
			got[l.Key] = l.Size
			return nil
		})
		if err != nil || !maps.Equal(got, want) {
			t.Fatalf("List = %v, %v; want %v", got, err, want)
		}
		stop := errors.New("enough")
		calls := 0
		err = s.List(context.Background(), func(Listed) error {
			calls++
			if calls == 3 {
				return stop
			}
			return nil
		})
		if err != stop || calls != 3 {
			t.Fatalf("a listing whose function fails on the 3rd entry: %v after %d calls; want its error as it is, after 3", err, calls)
		}
	})
}
