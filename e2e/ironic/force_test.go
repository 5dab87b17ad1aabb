package ironic

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The demos run virt-api, their sample VMs' guests get gracePeriod to shut
// down and the simulator keeps a stopping guest running for stopDelay (or
// its grace period, if shorter): a power-off the bridge did not force
// through virt-api would outlast Ironic's power_state_change_timeout (30 s)
// and fail the node's flow.
const (
	gracePeriod = 3600 // seconds
	stopDelay   = 10 * time.Minute
)

// unforcedEnv, set to 1, hides virt-api's subresource API from the bridge
// (404, as in a cluster without virt-api), so its ForceOff and
// ForceRestart stay graceful: the manual negative control of the forced
// power-offs (TestIronic must then fail).
const unforcedEnv = "REDFISH_BRIDGE_IRONIC_UNFORCED"

// forceCounter counts, per VM, the bridge's PUTs of virt-api's stop and
// restart subresources that virt-api accepted.
type forceCounter struct {
	mu       sync.Mutex
	n        map[string]int // "namespace/name/stop" or ".../restart"
	unforced bool
}

func newForceCounter() *forceCounter {
	return &forceCounter{n: map[string]int{}, unforced: os.Getenv(unforcedEnv) == "1"}
}

// wrap is demo.Options.WrapKube.
func (c *forceCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		rest, sub := strings.CutPrefix(req.URL.Path, "/apis/"+kubevirt.SubresourceGroupVersion.Group+"/")
		if sub && c.unforced {
			return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: http.Header{"Content-Type": []string{"text/plain"}}, Body: http.NoBody, Request: req}, nil
		}
		resp, err := next.RoundTrip(req)
		if !sub || req.Method != http.MethodPut || err != nil || resp.StatusCode/100 != 2 {
			return resp, err
		}
		// v1/namespaces/NS/virtualmachines/NAME/SUB
		if f := strings.Split(rest, "/"); len(f) == 6 && f[1] == "namespaces" && f[3] == kubevirt.VirtualMachines.Resource {
			c.mu.Lock()
			c.n[f[2]+"/"+f[4]+"/"+f[5]]++
			c.mu.Unlock()
		}
		return resp, nil
	})
}

// count is how many forced sub (kubevirt.SubresourceStop or Restart)
// virt-api accepted for key.
func (c *forceCounter) count(key system.Key, sub string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key.Namespace+"/"+key.Name+"/"+sub]
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// forcedStops is how many forced stops and restarts virt-api accepted
// for the node's VM.
func (n *node) forcedStops() int {
	return n.forces.count(n.key, kubevirt.SubresourceStop) + n.forces.count(n.key, kubevirt.SubresourceRestart)
}

// expectForced runs step (a power-off or reboot through Ironic) and checks
// that the bridge forced it through virt-api (the flow's own timeouts
// already fail a stop that waited for the guest's grace period).
func (n *node) expectForced(t *testing.T, step func()) {
	t.Helper()
	before := n.forcedStops()
	step()
	if got := n.forcedStops(); got <= before {
		t.Errorf("no forced stop or restart of %s through virt-api (%d before, %d after)", n.key, before, got)
	}
}
