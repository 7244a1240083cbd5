package remotetest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a TCP proxy on 127.0.0.1 between a client and a server that
// injects faults when the test says: resets, stalls, HTTP error answers,
// a response cut short, a throttled rate. Faults set while connections
// are open apply to them from their next bytes on (stalls, cuts, rate,
// ResetAll) or to the connections opened after (ResetNext, Fail).
type Proxy struct {
	Addr   string // 127.0.0.1:PORT
	target string
	ln     net.Listener

	mu        sync.Mutex
	wake      *sync.Cond // a stall ended, or the proxy closed
	closed    bool
	stalled   bool
	resetNext int // connections to reset at once; <0: all
	failNext  int // HTTP requests to answer with failCode; <0: all
	failCode  int //
	failWhere func(method, path string) bool
	cutAfter  int64 // bytes the server may still send before the cut; <0: no cut
	rate      int64 // bytes per second each way; 0: no limit
	conns     map[net.Conn]bool
	failed    int
	fromSrv   atomic.Int64
	fromCli   atomic.Int64
	copies    sync.WaitGroup
	acceptEnd chan struct{}
}

// StartProxy starts a proxy to target (HOST:PORT), closed at the test's end.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, cutAfter: -1,
		conns: map[net.Conn]bool{}, acceptEnd: make(chan struct{})}
	p.wake = sync.NewCond(&p.mu)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// URL is the proxy's http:// URL.
func (p *Proxy) URL() string { return "http://" + p.Addr }

// Stall stops every byte both ways, on every connection, until Resume.
func (p *Proxy) Stall() { p.set(func() { p.stalled = true }) }

// Resume ends a stall.
func (p *Proxy) Resume() { p.set(func() { p.stalled = false }) }

// ResetNext resets the next n connections as they are accepted (n < 0:
// every one until Clear).
func (p *Proxy) ResetNext(n int) { p.set(func() { p.resetNext = n }) }

// ResetAll resets every open connection now (TCP RST to the client).
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		reset(c)
	}
}

// Fail answers the next n HTTP requests with the status code, and closes
// their connection (n < 0: every one until Clear). Requests are looked at
// on the connections opened after the call (one made before it goes on
// unseen); a TLS connection is passed on, as the proxy cannot answer
// inside it.
func (p *Proxy) Fail(n, code int) { p.FailWhere(n, code, nil) }

// FailWhere is Fail for the requests that match says (all when nil).
func (p *Proxy) FailWhere(n, code int, match func(method, path string) bool) {
	p.set(func() { p.failNext, p.failCode, p.failWhere = n, code, match })
}

// Failed is how many requests Fail has answered.
func (p *Proxy) Failed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// CutAfter lets the server send n more bytes (over all connections), then
// closes the connection that carries the next: a response cut short.
func (p *Proxy) CutAfter(n int64) { p.set(func() { p.cutAfter = n }) }

// Throttle limits each direction of each connection to rate bytes per
// second (0: no limit).
func (p *Proxy) Throttle(rate int64) { p.set(func() { p.rate = rate }) }

// Clear ends every fault.
func (p *Proxy) Clear() {
	p.set(func() {
		p.stalled, p.resetNext, p.failNext, p.failWhere, p.cutAfter, p.rate = false, 0, 0, nil, -1, 0
	})
}

// FromServer and FromClient are the bytes passed on each way so far.
func (p *Proxy) FromServer() int64 { return p.fromSrv.Load() }
func (p *Proxy) FromClient() int64 { return p.fromCli.Load() }

// Close closes the proxy and every connection, and waits for its
// goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.wake.Broadcast()
	p.mu.Unlock()
	p.ln.Close()
	<-p.acceptEnd
	p.copies.Wait()
}

func (p *Proxy) set(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
	p.wake.Broadcast()
}

func (p *Proxy) accept() {
	defer close(p.acceptEnd)
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.copies.Add(1)
		go func() {
			defer p.copies.Done()
			p.serve(c)
		}()
	}
}

// track adds c to the open connections, false when the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// takeOne takes one from a fault's count: whether it applies.
func takeOne(n *int) bool {
	if *n == 0 {
		return false
	}
	if *n > 0 {
		*n--
	}
	return true
}

func (p *Proxy) serve(client net.Conn) {
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	defer client.Close()
	p.mu.Lock()
	resetNow := takeOne(&p.resetNext)
	failing := p.failNext != 0
	p.mu.Unlock()
	if resetNow {
		reset(client)
		return
	}
	in := bufio.NewReader(client)
	httpMode := failing && !startsTLS(client, in)
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		reset(client)
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	defer server.Close()
	done := make(chan struct{})
	go func() {
		if httpMode {
			p.requests(client, in, server)
		} else {
			p.pipe(client, in, server, &p.fromCli, false)
		}
		close(done)
	}()
	p.pipe(server, server, client, &p.fromSrv, true)
	client.Close()
	server.Close()
	<-done
}

// startsTLS reports whether the client's first byte opens a TLS handshake.
func startsTLS(client net.Conn, in *bufio.Reader) bool {
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer client.SetReadDeadline(time.Time{})
	first, err := in.Peek(1)
	return err == nil && first[0] == 0x16
}

// requests passes the client's HTTP requests to the server one by one,
// answering those Fail applies to itself: their body read, the status
// written, the connection closed.
func (p *Proxy) requests(client net.Conn, in *bufio.Reader, server net.Conn) {
	for {
		req, err := http.ReadRequest(in)
		if err != nil {
			closeWrite(server)
			return
		}
		if code, fail := p.takeFailure(req); fail {
			io.Copy(io.Discard, req.Body)
			fmt.Fprintf(client, "HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", code, http.StatusText(code))
			client.Close()
			server.Close()
			return
		}
		if err := req.Write(passWriter{p, server, &p.fromCli}); err != nil {
			server.Close()
			return
		}
	}
}

// takeFailure says whether Fail applies to req, and counts it.
func (p *Proxy) takeFailure(req *http.Request) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failWhere != nil && !p.failWhere(req.Method, req.URL.Path) || !takeOne(&p.failNext) {
		return 0, false
	}
	p.failed++
	return p.failCode, true
}

// passWriter writes through pass, from the client.
type passWriter struct {
	p     *Proxy
	dst   net.Conn
	count *atomic.Int64
}

func (w passWriter) Write(b []byte) (int, error) {
	if !w.p.pass(w.dst, b, w.count, false) {
		return 0, net.ErrClosed
	}
	return len(b), nil
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
		return
	}
	c.Close()
}

// pipe copies from src (read through r) to dst, applying the faults,
// until either end closes.
func (p *Proxy) pipe(src net.Conn, r io.Reader, dst net.Conn, count *atomic.Int64, fromServer bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(p.chunk(buf))
		if n > 0 {
			if !p.pass(dst, buf[:n], count, fromServer) {
				src.Close()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				closeWrite(dst)
				return
			}
			dst.Close()
			return
		}
	}
}

// chunk is how much one read may take: less under a low rate, so pacing
// is smooth.
func (p *Proxy) chunk(buf []byte) []byte {
	p.mu.Lock()
	rate := p.rate
	p.mu.Unlock()
	if rate > 0 && int64(len(buf)) > rate/20+1 {
		return buf[:rate/20+1]
	}
	return buf
}

// pass sends b on, after a stall ends and at the rate, up to a cut:
// false when the connection ends here.
func (p *Proxy) pass(dst net.Conn, b []byte, count *atomic.Int64, fromServer bool) bool {
	p.mu.Lock()
	for p.stalled && !p.closed {
		p.wake.Wait()
	}
	rate, closed := p.rate, p.closed
	cut := false
	if fromServer && p.cutAfter >= 0 {
		if int64(len(b)) > p.cutAfter {
			b, cut = b[:p.cutAfter], true
			p.cutAfter = -1
		} else {
			p.cutAfter -= int64(len(b))
		}
	}
	p.mu.Unlock()
	if closed {
		return false
	}
	if rate > 0 {
		time.Sleep(time.Duration(int64(len(b)) * int64(time.Second) / rate))
	}
	if _, err := dst.Write(b); err != nil {
		return false
	}
	count.Add(int64(len(b)))
	if cut {
		dst.Close()
		return false
	}
	return true
}

// reset closes c with a TCP RST.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}
