package build

import (
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A message as long as the hook sends (up to 60,000 bytes) arrives whole,
// and a stop reaches a connection made after it was asked for.
func TestTheHookChannelTakesTheLongestMessageAndStopsLateConnections(t *testing.T) {
	hub, err := listenHooks(filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer hub.close()
	dial := func() *net.UnixConn {
		c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: hub.ln.Addr().String(), Net: "unixpacket"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := dial()
	defer c.Close()
	long, _ := json.Marshal(map[string]any{"m": hookHello, "pid": 7, "argv": []string{strings.Repeat("x", 59_900)}})
	if len(long) > 60_000 {
		t.Fatalf("test message of %d bytes", len(long))
	}
	if _, err := c.Write(long); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-hub.msgs:
		if p.msg.M != hookHello || p.msg.PID != 7 || len(p.msg.Argv[0]) != 59_900 {
			t.Errorf("got %+v", p.msg.M)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the message never arrived")
	}
	hub.stop("budget")
	late := dial()
	defer late.Close()
	buf := make([]byte, 4096)
	_ = late.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := late.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), `"m":"stop"`) {
		t.Errorf("a connection made after the stop read %q, %v", buf[:n], err)
	}
}
