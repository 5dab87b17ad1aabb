package inventory

import (
	"bytes"
	"hash/maphash"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The managedFields kept aside ([CompactVM]'s second result) repeat
// across a fleet: the bridge's managers own the same fields on most VMs,
// and efi's other owner is mostly one author (a template, a tool). Each
// distinct set is kept once ([ownerSets]), shared by every VM holding it
// and dropped when the last one lets it go, so a VM costs one pointer for
// them where it cost ~1 KB (the entries, their FieldsV1 and its bytes).
// Reads are unchanged: [Inventory.VMManagedFields] returns the shared
// entries, decoded once per distinct set.

// ownerSetSeed seeds the sets' hashes.
var ownerSetSeed = maphash.MakeSeed()

// ownerSets interns the managedFields kept aside, by content; guarded by
// vmOwners.mu.
type ownerSets struct {
	// m holds the sets by the hash of their content (collisions chained).
	m map[uint64][]*ownerSet
}

// ownerSet is one distinct set of managedFields kept aside, shared.
type ownerSet struct {
	hash   uint64
	fields []metav1.ManagedFieldsEntry // shared: do not modify
	refs   int                         // the vmOwnersEntry values holding it
}

// acquire returns the set equal to fields, kept once: the one already
// kept, or fields newly kept; one more reference either way.
func (s *ownerSets) acquire(fields []metav1.ManagedFieldsEntry) *ownerSet {
	h := hashOwners(fields)
	for _, o := range s.m[h] {
		if sameOwners(o.fields, fields) {
			o.refs++
			return o
		}
	}
	if s.m == nil {
		s.m = map[uint64][]*ownerSet{}
	}
	o := &ownerSet{hash: h, fields: fields, refs: 1}
	s.m[h] = append(s.m[h], o)
	return o
}

// release drops one reference to o, and o with the last one.
func (s *ownerSets) release(o *ownerSet) {
	if o.refs--; o.refs > 0 {
		return
	}
	chain := s.m[o.hash]
	for i, c := range chain {
		if c == o {
			chain = append(chain[:i], chain[i+1:]...)
			break
		}
	}
	if len(chain) == 0 {
		delete(s.m, o.hash)
		return
	}
	s.m[o.hash] = chain
}

// hashOwners hashes what [sameOwners] compares.
func hashOwners(fields []metav1.ManagedFieldsEntry) uint64 {
	var h maphash.Hash
	h.SetSeed(ownerSetSeed)
	for _, e := range fields {
		for _, s := range []string{e.Manager, string(e.Operation), e.Subresource} {
			_, _ = h.WriteString(s) // a maphash.Hash never fails a write
			_ = h.WriteByte(0)
		}
		_, _ = h.Write(e.FieldsV1.GetRawBytes())
		_ = h.WriteByte(0)
	}
	return h.Sum64()
}

// sameOwners reports whether a and b hold the same entries in the same
// order: the fields [compactOwners] keeps (manager, operation,
// subresource, FieldsV1).
func sameOwners(a, b []metav1.ManagedFieldsEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Manager != b[i].Manager || a[i].Operation != b[i].Operation || a[i].Subresource != b[i].Subresource ||
			(a[i].FieldsV1 == nil) != (b[i].FieldsV1 == nil) ||
			!bytes.Equal(a[i].FieldsV1.GetRawBytes(), b[i].FieldsV1.GetRawBytes()) {
			return false
		}
	}
	return true
}
