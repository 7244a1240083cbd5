package build

import (
	"net"
	"sync"
)

// hookHub is the supervisor's end of a script build's channel: the socket
// every process of the command connects to, one connection a process. It
// hands their messages to the build's goroutine and broadcasts a stop to
// every connection, also to one that connects after the stop.
type hookHub struct {
	ln   *net.UnixListener
	msgs chan hookPacket

	mu      sync.Mutex
	conns   map[int]*net.UnixConn
	next    int
	stopMsg []byte // the stop every connection gets; nil while none was asked for
	readers sync.WaitGroup
}

// hookPacket is one message and the connection (process) it came on.
type hookPacket struct {
	conn   int
	msg    hookMsg
	closed bool // the connection ended: its process is gone (or closed it)
}

// listenHooks listens on a SOCK_SEQPACKET socket at path.
func listenHooks(path string) (*hookHub, error) {
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, err
	}
	h := &hookHub{ln: ln, msgs: make(chan hookPacket, 64), conns: map[int]*net.UnixConn{}}
	h.readers.Add(1)
	go h.accept()
	return h, nil
}

func (h *hookHub) accept() {
	defer h.readers.Done()
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			return // closed
		}
		h.mu.Lock()
		h.next++
		id := h.next
		h.conns[id] = c
		if h.stopMsg != nil {
			_, _ = c.Write(h.stopMsg)
		}
		h.readers.Add(1)
		h.mu.Unlock()
		go h.read(id, c)
	}
}

// read hands on every packet of one connection, then its end.
func (h *hookHub) read(id int, c *net.UnixConn) {
	defer h.readers.Done()
	buf := make([]byte, maxHookPacket)
	for {
		n, err := c.Read(buf)
		if err != nil || n == 0 {
			break
		}
		if m, err := decodeHookMsg(buf[:n]); err == nil {
			h.msgs <- hookPacket{conn: id, msg: m}
		}
	}
	h.mu.Lock()
	delete(h.conns, id)
	h.mu.Unlock()
	c.Close()
	h.msgs <- hookPacket{conn: id, closed: true}
}

// stop asks every process of the command, now and later, to stop its builds.
func (h *hookHub) stop(why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopMsg != nil {
		return
	}
	h.stopMsg = stopMessage(why)
	for _, c := range h.conns {
		_, _ = c.Write(h.stopMsg)
	}
}

// close stops accepting and, once every connection has ended (the
// command's processes are gone), closes msgs. Connections still open are
// closed: nothing of the command runs any more.
func (h *hookHub) close() {
	_ = h.ln.Close()
	h.mu.Lock()
	for _, c := range h.conns {
		_ = c.CloseRead()
	}
	h.mu.Unlock()
	go func() {
		h.readers.Wait()
		close(h.msgs)
	}()
}
