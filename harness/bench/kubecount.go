package bench

import (
	"github.com/redfish-bridge/redfish-bridge/kubevirt"

	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// KubeReq classifies one request the bridge sent to the apiserver.
type KubeReq struct {
	// Sync is true when the request was sent while serving a Redfish
	// request (its context comes from the bridge's http.Server), false for
	// the bridge's background work (informers, reconcilers).
	Sync bool
	// Verb is GET, LIST, WATCH, APPLY (server-side apply), PATCH, CREATE,
	// UPDATE or DELETE, as the apiserver's metrics name them.
	Verb string
	// Resource is the resource, with "/<subresource>" when there is one.
	Resource string
}

// KubeCounts counts requests by class.
type KubeCounts map[KubeReq]int64

// Sub returns c - before.
func (c KubeCounts) Sub(before KubeCounts) KubeCounts {
	out := KubeCounts{}
	for k, v := range c {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Sum adds the counts for which keep is true.
func (c KubeCounts) Sum(keep func(KubeReq) bool) int64 {
	var n int64
	for k, v := range c {
		if keep(k) {
			n += v
		}
	}
	return n
}

// IsVMWrite reports a write to a VirtualMachine (not its status).
func IsVMWrite(k KubeReq) bool {
	switch k.Verb {
	case "APPLY", "PATCH", "UPDATE", "CREATE":
		return k.Resource == kubevirt.VirtualMachines.Resource
	}
	return false
}

// KubeCounter counts the requests passing through the transports it wraps.
type KubeCounter struct {
	mu     sync.Mutex
	counts KubeCounts
	// failed counts answers >= 300 by status code.
	failed map[int]int64
	last   atomic.Int64 // unix nanos of the last request sent
}

// NewKubeCounter returns an empty counter.
func NewKubeCounter() *KubeCounter {
	return &KubeCounter{counts: KubeCounts{}, failed: map[int]int64{}}
}

// Wrap is a rest.Config WrapTransport.
func (k *KubeCounter) Wrap(next http.RoundTripper) http.RoundTripper {
	return &countingTransport{next: next, k: k}
}

// Snapshot returns a copy of the counts so far.
func (k *KubeCounter) Snapshot() KubeCounts {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(KubeCounts, len(k.counts))
	for c, v := range k.counts {
		out[c] = v
	}
	return out
}

// Failed returns a copy of the non-2xx answers by status code.
func (k *KubeCounter) Failed() map[int]int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[int]int64, len(k.failed))
	for c, v := range k.failed {
		out[c] = v
	}
	return out
}

// IdleFor reports how long ago the last request was sent.
func (k *KubeCounter) IdleFor() time.Duration {
	return time.Since(time.Unix(0, k.last.Load()))
}

type countingTransport struct {
	next http.RoundTripper
	k    *KubeCounter
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := Classify(req)
	t.k.last.Store(time.Now().UnixNano())
	t.k.mu.Lock()
	t.k.counts[c]++
	t.k.mu.Unlock()
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.StatusCode >= 300 {
		t.k.mu.Lock()
		t.k.failed[resp.StatusCode]++
		t.k.mu.Unlock()
	}
	return resp, err
}

// Classify names a request to the apiserver the way apiserver_request_total
// labels it (verb, resource[/subresource]) and tells whether it was sent
// while serving a Redfish request.
func Classify(req *http.Request) KubeReq {
	c := KubeReq{Sync: req.Context().Value(http.ServerContextKey) != nil}
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		rest = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		rest = segs[3:]
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	collection := len(rest) == 1
	switch {
	case len(rest) == 0:
		c.Resource = "(discovery)"
	case len(rest) >= 3:
		c.Resource = rest[0] + "/" + rest[2]
	default:
		c.Resource = rest[0]
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			c.Verb = "WATCH"
		case collection:
			c.Verb = "LIST"
		default:
			c.Verb = "GET"
		}
	case http.MethodPatch:
		c.Verb = "PATCH"
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
			c.Verb = "APPLY"
		}
	case http.MethodPost:
		c.Verb = "CREATE"
	case http.MethodPut:
		c.Verb = "UPDATE"
	default:
		c.Verb = req.Method
	}
	return c
}
