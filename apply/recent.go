package apply

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Bounds of the Client's memory of its own writes.
const (
	// recentTTL: an entry older than this is dropped (its VM may be gone).
	// The informer normally catches up within milliseconds; an entry only
	// helps while the cache is behind.
	recentTTL = 10 * time.Second
	// recentMax caps the entries (one per VM written within recentTTL).
	recentMax = 4096
	// recentChain caps the resourceVersions one entry stands in for.
	recentChain = 8
)

// recent is the Client's read-your-own-writes memory. For each VM it keeps
// the object the Client's last successful apply returned, and the chain of
// resourceVersions its own consecutive applies replaced (each apply carries
// the read's resourceVersion as a precondition, so each one replaced exactly
// that version). When the informer cache serves one of those versions it is
// provably behind the Client's own write, and the remembered object, a later
// state of the same VM, is used instead: the apply preconditioned on it does
// not get the 409 the cached version would. Any other cached version (the
// cache caught up, or someone else wrote) is trusted and the entry dropped.
// resourceVersions are compared for equality only: they are opaque.
//
// A nil *recent remembers nothing. Safe for concurrent use.
type recent struct {
	mu      sync.Mutex
	entries map[system.Key]*recentEntry
	swept   time.Time
	now     func() time.Time // time.Now; tests replace it
}

type recentEntry struct {
	replaced []string // resourceVersions the Client's applies replaced, oldest first
	obj      *unstructured.Unstructured
	at       time.Time
}

func newRecent() *recent {
	return &recent{entries: map[system.Key]*recentEntry{}, now: time.Now}
}

// resolve returns the object to use for a cache read of key: the
// remembered one when cached is a version the Client's own applies
// replaced, else cached (and the entry, now useless, is dropped). Like the
// cache's, the object returned must not be modified.
func (r *recent) resolve(key system.Key, cached *unstructured.Unstructured) *unstructured.Unstructured {
	if r == nil {
		return cached
	}
	if own := r.resolveVersion(key, cached.GetResourceVersion()); own != nil {
		return own
	}
	return cached
}

// resolveVersion is [recent.resolve] for a cached version known by its
// resourceVersion only: the remembered object, or nil to use the cache's.
func (r *recent) resolveVersion(key system.Key, cached string) *unstructured.Unstructured {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[key]
	if !ok {
		return nil
	}
	if r.now().Sub(e.at) > recentTTL || !slices.Contains(e.replaced, cached) {
		delete(r.entries, key)
		return nil
	}
	return e.obj
}

// remember records that an apply to key preconditioned on resourceVersion
// replaced returned out. An apply without precondition (replaced empty) or
// one that changed nothing (same version) is not remembered.
func (r *recent) remember(key system.Key, replaced string, out *unstructured.Unstructured) {
	rv := out.GetResourceVersion()
	if r == nil || replaced == "" || rv == "" || rv == replaced {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if now.Sub(r.swept) > recentTTL {
		r.sweep(now)
	}
	e := r.entries[key]
	switch {
	case e != nil && slices.Contains(e.replaced, rv):
		// A later apply of ours already replaced out: keep the newer one
		// (two goroutines' applies to one VM finished out of order).
	case e != nil && e.obj.GetResourceVersion() == replaced:
		// This apply replaced the remembered object: extend the chain.
		e.replaced = append(e.replaced, replaced)
		if n := len(e.replaced); n > recentChain {
			e.replaced = slices.Clone(e.replaced[n-recentChain:])
		}
		e.obj, e.at = out.DeepCopy(), now
	default:
		if e == nil && len(r.entries) >= recentMax {
			r.sweep(now)
			if len(r.entries) >= recentMax {
				return
			}
		}
		r.entries[key] = &recentEntry{replaced: []string{replaced}, obj: out.DeepCopy(), at: now}
	}
}

// sweep drops expired entries. r.mu is held.
func (r *recent) sweep(now time.Time) {
	for k, e := range r.entries {
		if now.Sub(e.at) > recentTTL {
			delete(r.entries, k)
		}
	}
	r.swept = now
}
