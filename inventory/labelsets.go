package inventory

import (
	"slices"
	"strings"
	"sync"
)

// A cached VM's labels are a map in its typed identity ([packedObject]:
// the collections' selectors read them without unpacking), ~340 B of heap
// for one label. A fleet's VMs mostly carry the same few label sets (a
// template's, a tool's), so each distinct set is one map shared by every
// identity carrying it ([sharedLabels]). The table is bounded
// (labelSetsMax sets of labelSetMaxLen bytes at most): once full, a VM of
// a new set gets a map of its own, as before. A set stays while the
// process runs (a few hundred KB at most).

// labelSetsMax bounds the label sets kept; labelSetMaxLen the bytes (keys
// and values) of one.
const (
	labelSetsMax   = 1024
	labelSetMaxLen = 512
)

// labelSets are the label maps identities share, by their canonical
// form (labelSetKey).
var labelSets = struct {
	mu sync.RWMutex
	m  map[string]map[string]string
}{m: map[string]map[string]string{}}

// sharedLabels returns the shared map holding labels (keys and values as
// decoded): the table's, or a new one (the table's when it has room).
// Shared: do not modify.
func sharedLabels(labels map[string]any) map[string]string {
	key, ok := labelSetKey(labels)
	if !ok {
		return ownLabels(labels)
	}
	labelSets.mu.RLock()
	m, ok := labelSets.m[key]
	labelSets.mu.RUnlock()
	if ok {
		return m
	}
	labelSets.mu.Lock()
	defer labelSets.mu.Unlock()
	if m, ok := labelSets.m[key]; ok {
		return m
	}
	if len(labelSets.m) == labelSetsMax {
		return ownLabels(labels)
	}
	m = make(map[string]string, len(labels))
	for k, v := range labels { // its own strings, not the object's
		m[strings.Clone(k)] = strings.Clone(v.(string))
	}
	labelSets.m[strings.Clone(key)] = m
	return m
}

// labelSetKey is labels' canonical form (sorted keys, each with its
// value, NUL-separated); false when labels hold a value that is not a
// string or are too long to share.
func labelSetKey(labels map[string]any) (string, bool) {
	keys := make([]string, 0, len(labels))
	n := 0
	for k, v := range labels {
		s, ok := v.(string)
		if !ok {
			return "", false
		}
		keys = append(keys, k)
		n += len(k) + len(s) + 2
	}
	if n > labelSetMaxLen {
		return "", false
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(n)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(labels[k].(string))
		b.WriteByte(0)
	}
	return b.String(), true
}

// ownLabels is labels' string values as a new map.
func ownLabels(labels map[string]any) map[string]string {
	m := make(map[string]string, len(labels))
	for k, v := range labels {
		if s, ok := v.(string); ok {
			m[k] = s
		}
	}
	return m
}
