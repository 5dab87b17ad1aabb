package reliability

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// loginFloodClients is how many clients loop bad logins of unknown users,
// each from its own loopback address (no address or user lock engages).
const loginFloodClients = 64

// TestLoginFlood is docs/reliability.md row 110 on the real bridge binary
// (one hashing slot on 2 cores): unknown users' bad logins from many
// addresses used to queue FIFO for bcrypt, so a known user's password
// check waited behind all of them (12.6-19.9 s, 500 after 30 s). Under the
// flood the administrator's password checks (a wrong password, so each is
// really hashed, then the right one) are answered 401 and 201 within 1 s
// or 10 times the same check without the flood, whichever is more.
func TestLoginFlood(t *testing.T) {
	ctx := t.Context()
	binary := buildBridge(t)
	cluster, a := clusterWithAdmin(t)
	addr := freeAddr(t)
	startBridgeWith(t, cluster, bridgeproc.Options{Bin: binary(), Namespaces: []string{demo.VMNamespace}, Listen: addr}, a, "/redfish/v1/Systems")
	base := "http://" + addr
	admin := newClient(t, base, "127.0.0.1")
	check := func(password string) (int, time.Duration) {
		t.Helper()
		start := time.Now()
		status, err := postLogin(ctx, admin.hc, base, a.user, password)
		if err != nil {
			t.Fatalf("login of %s: %v", a.user, err)
		}
		return status, time.Since(start)
	}
	status, control := check("wrong-0")
	if status != http.StatusUnauthorized {
		t.Fatalf("wrong password without the flood: %d, want 401", status)
	}

	floodCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var sent, refused atomic.Int64
	started := make(chan struct{}, loginFloodClients)
	for i := range loginFloodClients {
		c := newClient(t, base, fmt.Sprintf("127.0.%d.%d", 10+i/200, i%200+1))
		wg.Go(func() {
			for j := 0; floodCtx.Err() == nil; j++ {
				status, err := postLogin(floodCtx, c.hc, base, fmt.Sprintf("ghost-%d-%d", i, j), "guess")
				if err != nil {
					return
				}
				if j == 0 {
					started <- struct{}{}
				}
				sent.Add(1)
				if status != http.StatusUnauthorized {
					refused.Add(1)
				}
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	for range loginFloodClients {
		<-started // every flooding client answered once: the flood runs
	}
	bound := max(time.Second, 10*control)
	var slowest time.Duration
	for i, c := range []struct {
		password string
		want     int
	}{{"wrong-1", http.StatusUnauthorized}, {"wrong-2", http.StatusUnauthorized}, {a.password, http.StatusCreated}} {
		status, took := check(c.password)
		slowest = max(slowest, took)
		if status != c.want {
			t.Errorf("check %d of %s under the flood: %d after %v, want %d", i, a.user, status, took.Round(time.Millisecond), c.want)
		}
		if took > bound {
			t.Errorf("check %d of %s under the flood took %v, bound %v (1 s or 10x %v without the flood)", i, a.user, took.Round(time.Millisecond), bound, control.Round(time.Millisecond))
		}
	}
	t.Logf("RELIABILITY login flood: %d clients from %d addresses sent %d unknown-user logins (%d not 401); "+
		"the administrator's password checks under the flood: slowest %v (without the flood %v)",
		loginFloodClients, loginFloodClients, sent.Load(), refused.Load(), slowest.Round(time.Millisecond), control.Round(time.Millisecond))
}

// postLogin posts a session login and returns the status.
func postLogin(ctx context.Context, hc *http.Client, base, user, password string) (int, error) {
	body := `{"UserName":"` + user + `","Password":"` + password + `"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/redfish/v1/SessionService/Sessions", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
