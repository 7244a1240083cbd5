package remote

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// Bounds on how long a failing operation may take: the retries' backoff
// (4 or 5 attempts, at most 3 s apart) and a little more.
const (
	failWithin  = 30 * time.Second
	stallWithin = 15 * time.Second
)

// A store whose server is not running: Open succeeds (it sends nothing),
// and each operation fails, its refused connection retried a bounded
// number of times (counted by a dialer wrapping the real one): OCI, the
// first attempt and one retry, one backoff apart (about 250 ms); S3, the
// SDK's retryer's attempts. A miss is never reported for it.
func TestServerDownAtStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	s3 := remotetest.S3{Bucket: "trt-cache"}
	env := remotetest.Env{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_EC2_METADATA_DISABLED": "true"}
	stores := []struct {
		url      string
		attempts int
	}{
		{"oci://" + down + "/trt/cache", 2},
		{s3.URL("cache", "http://"+down), 5},
	}
	for _, st := range stores {
		var dials atomic.Int64
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
		s, err := Open(context.Background(), st.url, Options{Getenv: env.Getenv, dial: dial})
		if err != nil {
			t.Fatal(err)
		}
		for op := range 2 {
			before := dials.Load()
			within(t, failWithin, "a Get from a store that is down", func() {
				_, err = s.Get(context.Background(), keyOf("down"))
			})
			if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "refused") {
				t.Errorf("%s: Get = %v; want the refused connection", st.url, err)
			}
			if n := dials.Load() - before; n != int64(st.attempts) {
				t.Errorf("%s: Get %d tried to connect %d times; want %d", st.url, op+1, n, st.attempts)
			}
		}
	}
}

// The server killed during a Put: the Put fails, and after a restart the
// store has no entry for the key (nothing half-written is an entry); a
// second Put succeeds.
func TestServerKilledMidPush(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		p := remotetest.StartProxy(t, fx.Target)
		p.Throttle(8 << 20)
		s := fx.open(t, fx.Via(p.Addr))
		key := keyOf("killed mid-push")
		engine := testFile(t, "engine", 24<<20, 9)
		done := make(chan error, 1)
		go func() {
			_, err := s.Put(context.Background(), key, testMeta(key), []Upload{engine}, false)
			done <- err
		}()
		waitFor(t, "4 MiB pushed", func() bool { return p.FromClient() > 4<<20 })
		fx.Kill(t)
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("a Put to a server killed during it succeeded")
			}
			t.Log(err)
		case <-time.After(failWithin):
			t.Fatalf("the Put did not end within %s of the server's death", failWithin)
		}
		fx.Restart(t)
		p.Clear()
		direct := fx.open(t, fx.URL)
		if has, err := direct.Has(context.Background(), key); err != nil || has {
			t.Fatalf("after the killed Put, Has = %v, %v; want false, nil", has, err)
		}
		if !put(t, direct, key, engine, false) {
			t.Fatal("the Put after the restart pushed nothing")
		}
		got, err := readAll(t, direct, key, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, got, engine)
	})
}

// The server killed during a pull: the reader fails (never a short read
// passed off as the whole), within the retries' bound.
func TestServerKilledMidPull(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		key := keyOf("killed mid-pull")
		engine := testFile(t, "engine", 24<<20, 10)
		put(t, fx.open(t, fx.URL), key, engine, false)
		p := remotetest.StartProxy(t, fx.Target)
		s := fx.open(t, fx.Via(p.Addr))
		r := openFile(t, s, key)
		p.Throttle(4 << 20)
		readSome(t, r, 2<<20)
		fx.Kill(t)
		var n int64
		var err error
		within(t, failWithin, "the read after the server's death", func() { n, err = io.Copy(io.Discard, r) })
		if err == nil || 2<<20+n >= engine.Size {
			t.Fatalf("read %d more bytes and %v after the server died; want an error before the end", n, err)
		}
	})
}

// Connections reset: new ones (retried, then the operation succeeds) and
// open ones during a pull (the read fails).
func TestConnectionResets(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		key := keyOf("resets")
		engine := testFile(t, "engine", 16<<20, 11)
		put(t, fx.open(t, fx.URL), key, engine, false)
		p := remotetest.StartProxy(t, fx.Target)
		s := fx.open(t, fx.Via(p.Addr))
		p.ResetNext(2)
		got, err := readAll(t, s, key, 0)
		if err != nil {
			t.Fatalf("after two resets: %v; want the retries to succeed", err)
		}
		sameBytes(t, got, engine)

		r := openFile(t, s, key)
		p.Throttle(4 << 20)
		readSome(t, r, 1<<20)
		p.ResetAll()
		n, err := io.Copy(io.Discard, r)
		if err == nil || 1<<20+n >= engine.Size {
			t.Fatalf("read %d more bytes and %v after the reset; want an error before the end", n, err)
		}
	})
}

// A store that stops moving bytes is abandoned after Options.Stall: before
// an answer (Get), during a pull (Open's reader) and during a push, with
// ErrStalled.
func TestStallsAreAbandoned(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		key := keyOf("stall")
		engine := testFile(t, "engine", 16<<20, 12)
		put(t, fx.open(t, fx.URL), key, engine, false)
		p := remotetest.StartProxy(t, fx.Target)
		s := fx.open(t, fx.Via(p.Addr), func(o *Options) { o.Stall = time.Second })
		ctx := context.Background()

		e, err := s.Get(ctx, key) // the connection is made before the stall
		if err != nil {
			t.Fatal(err)
		}
		p.Stall()
		within(t, stallWithin, "a stalled Get", func() { _, err = s.Get(ctx, key) })
		wantErr(t, err, ErrStalled)
		p.Resume()

		r, err := s.Open(ctx, e, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		p.Throttle(4 << 20)
		readSome(t, r, 1<<20)
		p.Stall()
		within(t, stallWithin, "a stalled pull", func() { _, err = io.Copy(io.Discard, r) })
		wantErr(t, err, ErrStalled)
		p.Clear()

		p.Throttle(4 << 20)
		done := make(chan error, 1)
		other := testFile(t, "engine", 16<<20, 13)
		go func() {
			_, err := s.Put(ctx, keyOf("stalled push"), testMeta(key), []Upload{other}, false)
			done <- err
		}()
		waitFor(t, "1 MiB pushed", func() bool { return p.FromClient() > 1<<20 })
		p.Stall()
		select {
		case err := <-done:
			wantErr(t, err, ErrStalled)
		case <-time.After(stallWithin):
			t.Fatalf("a stalled push was not abandoned within %s", stallWithin)
		}
	})
}

// 503 answers are retried: two, then the operation succeeds; every answer
// a 503, and it fails after a bounded number of attempts.
func TestServiceUnavailableIsRetried(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		key := keyOf("503")
		engine := testFile(t, "engine", 4<<20, 14)
		put(t, fx.open(t, fx.URL), key, engine, false)
		p := remotetest.StartProxy(t, fx.Target)

		p.Fail(2, 503)
		got, err := readAll(t, fx.open(t, fx.Via(p.Addr)), key, 0)
		if err != nil {
			t.Fatalf("after two 503 answers: %v; want the retries to succeed", err)
		}
		sameBytes(t, got, engine)
		if p.Failed() != 2 {
			t.Errorf("%d requests answered 503, want 2", p.Failed())
		}

		p.Fail(-1, 503)
		within(t, failWithin, "a Get answered 503 every time", func() {
			_, err = fx.open(t, fx.Via(p.Addr)).Get(context.Background(), key)
		})
		if err == nil || !strings.Contains(err.Error(), "503") {
			t.Fatalf("Get answered 503 every time = %v; want the 503", err)
		}
		n503 := p.Failed() - 2
		if n := n503; n < 2 || n > 5 {
			t.Errorf("%d attempts of a Get answered 503; want 2 to 5", n)
		}

		// An upload answered 503 is sent again, from its first byte.
		p.Clear()
		p.FailWhere(1, 503, func(method, path string) bool {
			return method == "PUT" && strings.Contains(path, "/blobs/")
		})
		other := testFile(t, "engine", 4<<20, 26)
		if !put(t, fx.open(t, fx.Via(p.Addr)), keyOf("503 push"), other, false) {
			t.Fatal("the Put pushed nothing")
		}
		if p.Failed() != 2+n503+1 {
			t.Errorf("%d requests answered 503, want the upload's too", p.Failed()-2-n503)
		}
		got, err = readAll(t, fx.open(t, fx.URL), keyOf("503 push"), 0)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, got, other)
	})
}

// A response cut short: the metadata (Get) and the engine (Open's reader)
// fail, never read short as if whole.
func TestResponseCutShort(t *testing.T) {
	eachStore(t, func(t *testing.T, fx *fixture) {
		key := keyOf("cut")
		engine := testFile(t, "engine", 16<<20, 15)
		put(t, fx.open(t, fx.URL), key, engine, false)
		p := remotetest.StartProxy(t, fx.Target)
		s := fx.open(t, fx.Via(p.Addr))

		r := openFile(t, s, key)
		p.CutAfter(1 << 20)
		n, err := io.Copy(io.Discard, r)
		if err == nil || n >= engine.Size {
			t.Fatalf("read %d bytes and %v through a cut; want an error before the end", n, err)
		}
		t.Log(err)
		p.Clear()

		// Cuts at points through a Get's answers (headers, the manifest or
		// record, the metadata): a request cut in its headers is retried,
		// one cut in its body fails; never is a short answer taken.
		for _, cut := range []int64{40, 300, 600, 900, 1200, 1500} {
			s := fx.open(t, fx.Via(p.Addr))
			if _, err := s.Has(context.Background(), key); err != nil { // the connection made
				t.Fatal(err)
			}
			p.CutAfter(cut)
			e, err := s.Get(context.Background(), key)
			if err == nil && (e.Key != key || string(e.Meta) != string(testMeta(key)) || e.Files[0] != engine.File) {
				t.Fatalf("a Get cut after %d bytes returned %+v", cut, e)
			}
			t.Logf("cut after %d bytes: %v", cut, err)
			p.Clear()
		}
	})
}

// openFile gets key's entry and opens its first file, closed at the
// test's end.
func openFile(t testing.TB, s Store, key string) io.ReadCloser {
	t.Helper()
	e, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(context.Background(), e, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// readSome reads n bytes of r.
func readSome(t testing.TB, r io.Reader, n int64) {
	t.Helper()
	if _, err := io.CopyN(io.Discard, r, n); err != nil {
		t.Fatal(err)
	}
}

// waitFor waits for cond, up to a bound.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(failWithin)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, failWithin)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
