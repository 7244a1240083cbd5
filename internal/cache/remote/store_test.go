package remote

import (
	"context"
	"testing"
	"time"
)

// A round trip of tens of MB through each store: Put, Has, Get, Open,
// List, a Put that finds the entry (pushed false), a replacement, Delete,
// and the misses after it.
func TestRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		ctx := context.Background()
		s := fx.open(t, fx.url)
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
