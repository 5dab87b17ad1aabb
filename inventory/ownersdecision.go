package inventory

import "github.com/redfish-bridge/redfish-bridge/system"

// VMOwnersDecision returns the decision kept beside the managedFields of
// VM key at resourceVersion ([Inventory.VMManagedFields]), made by decide
// the first time it is asked for at that version; false (decide not
// called) when that version's managedFields are not kept. The decision is
// kept as long as the version is, one per VM, so a fleet of any size has
// each VM's decided once per version (apply's ValidateLegacy,
// which every render of a System asks, is the one decision kept). decide
// runs without the lock held; two first asks at once may both run it. A
// decision must not be nil.
func (inv *Inventory) VMOwnersDecision(key system.Key, resourceVersion string, decide func() any) (any, bool) {
	inv.owners.mu.RLock()
	e, ok := inv.owners.m[key]
	inv.owners.mu.RUnlock()
	if !ok || e.resourceVersion != resourceVersion {
		return nil, false
	}
	if e.decided != nil {
		return e.decided, true
	}
	d := decide()
	inv.owners.mu.Lock()
	defer inv.owners.mu.Unlock()
	if cur, ok := inv.owners.m[key]; ok && cur.resourceVersion == resourceVersion {
		cur.decided = d
		inv.owners.m[key] = cur
	}
	return d, true
}
