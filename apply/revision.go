package apply

import (
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Revision is the [VM.Revision] Read would return now, found without
// decoding, or "" when Read would not answer from the cache (no cache, a
// miss, or the cache about to show a newer version). A reader may keep
// what it derived from a read until the revision moves.
func (c *Client) Revision(key system.Key) string {
	if c.cache == nil {
		return ""
	}
	rv, ok := c.cachedVersion(key)
	if !ok {
		return ""
	}
	if vc, ok := c.cache.(versionedCache); ok {
		vmiRV, err := vc.VMIResourceVersion(key)
		// Read reads a VMI it cannot get as none.
		return revisionOfVersions(rv, err == nil, vmiRV)
	}
	vmi, err := c.cache.VMI(key)
	if err != nil {
		vmi = nil // Read reads a VMI it cannot get as none
	}
	return revisionAt(rv, vmi)
}

// versionedCache is a [Cache] that tells a cached VM's and VMI's
// resourceVersion without building them (inventory.Inventory unpacks an
// object per read), so a kept System body's hit decodes nothing.
type versionedCache interface {
	VMResourceVersion(key system.Key) (string, error)
	VMIResourceVersion(key system.Key) (string, error)
}

// cachedVersion is the resourceVersion of the VM [Client.cached] would
// offer; false when it would offer none (a miss, or the cache about to
// show a newer version).
func (c *Client) cachedVersion(key system.Key) (string, bool) {
	vc, ok := c.cache.(versionedCache)
	if !ok {
		r, err := c.cached(key)
		if err != nil || r.obj == nil {
			return "", false
		}
		return r.obj.GetResourceVersion(), true
	}
	rv, err := vc.VMResourceVersion(key)
	if err != nil {
		return "", false
	}
	if own := c.recent.resolveVersion(key, rv); own != nil {
		return own.GetResourceVersion(), true // the Writer's own apply answer
	}
	if tc, ok := c.cache.(TrimmedCache); ok {
		if _, known := tc.VMManagedFields(key, rv); !known {
			return "", false
		}
	}
	return rv, true
}
