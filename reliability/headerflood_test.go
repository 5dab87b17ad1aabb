package reliability

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// Header flood of docs/reliability.md row 1: floodConns connections from 127.0.0.2,
// each sending a request line and floodLines header lines of 8000 bytes
// (~1 MB) and never the blank line that ends the header.
const (
	floodConns = 300
	floodLines = 125
	// floodRSSBound is how much the bridge may grow under the flood: well
	// under the chart's 256Mi memory request minus the ~90 MB the bridge uses idle.
	floodRSSBound = 64 << 20
)

// TestHeaderFlood runs the real bridge binary and floods it with slow
// ~1 MB headers: its RSS must stay within floodRSSBound of where it
// started and a client from another address must still be served. The
// negative control runs the same flood against a bridge with Go's default
// 1 MiB header limit and sees it grow past the bound.
func TestHeaderFlood(t *testing.T) {
	ctx := t.Context()
	binary := buildBridge(t)
	cluster, a := clusterWithAdmin(t)
	bin := binary()
	run := func(t *testing.T, args ...string) (grew int64, served bool) {
		addr := freeAddr(t)
		p := startBridgeWith(t, cluster, bridgeproc.Options{Bin: bin, Namespaces: []string{demo.VMNamespace}, Listen: addr, Args: args}, a, "/redfish/v1/Systems")
		before, err := p.RSS()
		if err != nil {
			t.Fatal(err)
		}
		peak := flood(t, addr, p.RSS)
		c := newClient(t, "http://"+addr, "127.0.0.1")
		resp := c.do(ctx, t, http.MethodGet, "/redfish/v1/Systems", a, "")
		t.Logf("RELIABILITY header flood %v: %d connections x %d KB: RSS %d MB -> peak %d MB; a second client got %d",
			args, floodConns, floodLines*8, before>>20, peak>>20, resp.status)
		return peak - before, resp.status == http.StatusOK
	}
	t.Run("limits on", func(t *testing.T) {
		grew, served := run(t)
		if grew > floodRSSBound {
			t.Errorf("the flood grew the bridge by %d MB, bound %d MB", grew>>20, floodRSSBound>>20)
		}
		if !served {
			t.Error("a second client was not served during the flood")
		}
	})
	t.Run("negative control: Go's 1 MiB header limit", func(t *testing.T) {
		grew, _ := run(t, "--max-header-bytes=1048576", "--max-connections=-1")
		if grew <= floodRSSBound {
			t.Errorf("without the limits the flood grew the bridge by only %d MB: the test cannot see the attack", grew>>20)
		}
	})
}

// flood opens floodConns connections from 127.0.0.2 to addr, writes the
// unfinished headers on all of them, holds them open while sampling rss
// and returns the highest sample.
func flood(t *testing.T, addr string, rss func() (int64, error)) int64 {
	t.Helper()
	line := "X-Pad: " + strings.Repeat("a", 8000-len("X-Pad: \r\n")) + "\r\n"
	header := "GET /redfish/v1/Systems HTTP/1.1\r\nHost: bridge\r\n" + strings.Repeat(line, floodLines)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	conns := make(chan net.Conn, floodConns)
	for range floodConns {
		wg.Go(func() {
			c, err := d.DialContext(t.Context(), "tcp", addr)
			if err != nil {
				return
			}
			conns <- c
			_ = c.SetWriteDeadline(time.Now().Add(20 * time.Second))
			// Slowly: 8 lines at a time, never the final blank line.
			for i := 0; i < len(header); i += 8 * len(line) {
				if _, err := c.Write([]byte(header[i:min(i+8*len(line), len(header))])); err != nil {
					return // refused: the server closed the connection
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	var peak int64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	sample := func() {
		if n, err := rss(); err == nil {
			peak = max(peak, n)
		}
	}
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-time.After(200 * time.Millisecond):
		}
		sample()
	}
	for range 5 { // the headers are held: keep sampling for a second
		time.Sleep(200 * time.Millisecond)
		sample()
	}
	close(conns)
	n := 0
	for c := range conns {
		n++
		_ = c.Close()
	}
	if n < floodConns/2 {
		t.Fatalf("only %d of %d flood connections opened", n, floodConns)
	}
	t.Logf("%d flood connections opened", n)
	return peak
}
