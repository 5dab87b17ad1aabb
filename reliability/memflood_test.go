package reliability

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The memory attacks of docs/reliability.md rows 13 and 20, on the real binary with
// the chart's memory request (deploy/redfish-bridge values: requests.memory
// 256Mi; the limit is 448Mi) as the bound.
const (
	// chartMemoryLimit is the chart's container memory request (stricter
	// than its limit).
	chartMemoryLimit = 256 << 20
	// methodFloodRequests unauthenticated requests, each with a random
	// methodFloodBytes-byte method (before: one label per method, 1.39 GB
	// /metrics after 10,000).
	methodFloodRequests = 10000
	methodFloodBytes    = 8 << 10
	// metricsBound is the most a /metrics scrape may be after the flood.
	metricsBound = 256 << 10
	// certFloodPosts certificates of certFloodBytes each posted to one slot
	// (before: all 16 stored, ~1 MiB, and reading them in a loop took the
	// binary to 273 MiB), then certFloodReads GETs of its Certificates.
	certFloodPosts = 16
	certFloodBytes = 63 << 10
	certFloodReads = 2000
)

// TestMemoryFloods runs the real bridge binary, floods it with random
// methods (item 1) and with a slot's certificates read in a loop (item
// 5), sampling its RSS throughout: the peak must stay under the chart's
// memory limit and within floodRSSBound of where it started, /metrics must
// stay small, and an authenticated client is still answered afterwards.
func TestMemoryFloods(t *testing.T) {
	ctx := t.Context()
	binary := buildBridge(t)
	cluster, a := clusterWithAdmin(t)
	if err := cluster.CreateNamespace(ctx, demo.VMNamespace); err != nil {
		t.Fatal(err)
	}
	if err := demo.CreateSampleVMs(ctx, dynamic.NewForConfigOrDie(cluster.Admin), demo.VMNamespace, 1); err != nil {
		t.Fatal(err)
	}
	sys := "/redfish/v1/Systems/" + system.Key{Namespace: demo.VMNamespace, Name: demo.SampleVMNames(1)[0]}.ID()
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	p := startBridgeWith(t, cluster, bridgeproc.Options{
		Bin: binary(), Namespaces: []string{demo.VMNamespace}, Listen: addr, MetricsListen: metricsAddr,
	}, a, sys).Proc
	c := newClient(t, "http://"+addr, "127.0.0.1")
	check := func(t *testing.T, what string, before, peak int64) {
		t.Helper()
		if peak > chartMemoryLimit {
			t.Errorf("%s: peak RSS %d MB, over the chart's limit %d MB", what, peak>>20, chartMemoryLimit>>20)
		}
		if grew := peak - before; grew > floodRSSBound {
			t.Errorf("%s grew the bridge by %d MB, bound %d MB", what, grew>>20, floodRSSBound>>20)
		}
		if r := c.do(ctx, t, http.MethodGet, sys, a, ""); r.status != http.StatusOK {
			t.Errorf("after %s: GET %s %d, want 200", what, sys, r.status)
		}
	}

	t.Run("random methods", func(t *testing.T) {
		before := rss(t, p)
		peak := sampleRSS(t, p, func() { methodFlood(t, addr) })
		size := scrapeSize(t, "http://"+metricsAddr+"/metrics")
		t.Logf("RELIABILITY method flood: %d requests with %d-byte methods: RSS %d MB -> peak %d MB, /metrics %d bytes",
			methodFloodRequests, methodFloodBytes, before>>20, peak>>20, size)
		if size > metricsBound {
			t.Errorf("/metrics is %d bytes after the flood, want at most %d", size, metricsBound)
		}
		check(t, "the method flood", before, peak)
	})

	t.Run("certificates read in a loop", func(t *testing.T) {
		certs := sys + "/VirtualMedia/" + media.DefaultSlot + "/Certificates"
		before := rss(t, p)
		stored := 0
		for i := range certFloodPosts {
			r := c.do(ctx, t, http.MethodPost, certs, a, certJSON(t, fmt.Sprintf("flood-%d", i), certFloodBytes))
			switch r.status {
			case http.StatusCreated:
				stored++
			case http.StatusBadRequest:
			default:
				t.Fatalf("POST certificate %d: %d %s", i, r.status, r.body)
			}
		}
		var coll struct {
			Members []struct {
				ID string `json:"@odata.id"`
			}
		}
		if r := c.do(ctx, t, http.MethodGet, certs, a, ""); r.status != http.StatusOK || json.Unmarshal(r.body, &coll) != nil {
			t.Fatalf("GET %s: %d %s", certs, r.status, r.body)
		}
		paths := []string{certs}
		for _, m := range coll.Members {
			paths = append(paths, m.ID)
		}
		var reads atomic.Int64
		peak := sampleRSS(t, p, func() {
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for n := reads.Add(1); n <= certFloodReads; n = reads.Add(1) {
						path := paths[int(n)%len(paths)]
						if r := c.do(ctx, t, http.MethodGet, path, a, ""); r.status != http.StatusOK {
							t.Errorf("GET %s: %d", path, r.status)
							return
						}
					}
				})
			}
			wg.Wait()
		})
		t.Logf("RELIABILITY certificate flood: %d of %d certificates of %d KiB stored, %d reads: RSS %d MB -> peak %d MB",
			stored, certFloodPosts, certFloodBytes>>10, certFloodReads, before>>20, peak>>20)
		if stored*certFloodBytes > media.MaxTrustBytes {
			t.Errorf("%d certificates of %d KiB stored on one slot, more than its %d KiB", stored, certFloodBytes>>10, media.MaxTrustBytes>>10)
		}
		check(t, "the certificate flood", before, peak)
	})
}

// rss is p's resident set now.
func rss(t *testing.T, p *bridgeproc.Proc) int64 {
	t.Helper()
	n, err := p.RSS()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sampleRSS runs attack while sampling p's RSS every 50 ms and returns
// the highest sample.
func sampleRSS(t *testing.T, p *bridgeproc.Proc, attack func()) int64 {
	t.Helper()
	done := make(chan struct{})
	var peak atomic.Int64
	peak.Store(rss(t, p))
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if n, err := p.RSS(); err == nil && n > peak.Load() {
					peak.Store(n)
				}
			}
		}
	})
	attack()
	close(done)
	wg.Wait()
	return max(peak.Load(), rss(t, p))
}

// methodFlood sends methodFloodRequests unauthenticated requests with
// random methods from 127.0.0.2 over 4 keep-alive connections, each
// answered before the next (a connection the bridge closes is dialled
// again).
func methodFlood(t *testing.T, addr string) {
	t.Helper()
	var sent atomic.Int64
	var wg sync.WaitGroup
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	for range 4 {
		wg.Go(func() {
			var conn net.Conn
			var br *bufio.Reader
			defer func() {
				if conn != nil {
					_ = conn.Close()
				}
			}()
			for sent.Add(1) <= methodFloodRequests && t.Context().Err() == nil {
				if conn == nil {
					var err error
					if conn, err = d.DialContext(t.Context(), "tcp", addr); err != nil {
						t.Errorf("dial: %v", err)
						return
					}
					br = bufio.NewReader(conn)
				}
				_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
				req := randomMethod(t) + " /redfish/v1/Systems HTTP/1.1\r\nHost: bridge\r\n\r\n"
				resp, err := writeRead(conn, br, req)
				if err != nil || resp.Close {
					_ = conn.Close()
					conn = nil
				}
			}
		})
	}
	wg.Wait()
}

// writeRead writes req on conn and reads one response from br.
func writeRead(conn net.Conn, br *bufio.Reader, req string) (*http.Response, error) {
	if _, err := io.WriteString(conn, req); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp, nil
}

// randomMethod is methodFloodBytes random upper-case letters (a valid
// HTTP token).
func randomMethod(t *testing.T) string {
	t.Helper()
	b := make([]byte, methodFloodBytes)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 'A' + b[i]%26
	}
	return string(b)
}

// scrapeSize GETs url and returns the body's length.
func scrapeSize(t *testing.T, url string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return int(n)
}

// certJSON is a CertificateString body holding a self-signed certificate
// whose PEM is about size bytes.
func certJSON(t *testing.T, cn string, size int) string {
	t.Helper()
	pemText, err := testca.PaddedCertPEM(cn, size)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]string{"CertificateString": pemText, "CertificateType": "PEM"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
