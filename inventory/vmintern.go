package inventory

import (
	"sync"
	"sync/atomic"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// The strings every packed object repeats (vmcodec.go) are kept once in
// the process, in one table, and a packed object holds their index: the
// map keys (a VM's ~60: apiVersion, metadata, template, domain, ... and
// the label and annotation keys) and the values common to every VM
// (packedValues: the API version, the kinds, the usual conditions and
// states). A map key joins the table the first time it is packed; a value
// is indexed only when the table holds it already (as a key or a common
// value), so the names, UIDs and versions of a fleet never fill it. The
// table is bounded (internMax strings of internMaxLen bytes at most, a
// few hundred KB): once full, a string not in it is packed as is, which
// costs bytes, never a wrong answer.

// internMax bounds the strings the table holds; internMaxLen the length
// of one.
const (
	internMax    = 4096
	internMaxLen = 64
)

// packedValues are the string values seeded in the table: what most VMs
// and VMIs hold in the fields CompactVM and trimVMI keep.
var packedValues = []string{
	kubevirt.APIVersion, kubevirt.Kind, "VirtualMachineInstance",
	"True", "False", "Unknown", "RestartRequired", "Failure", "Ready", "LiveMigratable",
	"Running", "Stopped", "Starting", "Stopping", "Paused", "Provisioning", "Terminating", "ErrorUnschedulable",
	"Pending", "Scheduling", "Scheduled", "Succeeded", "Failed",
	string(kubevirt.RunStrategyAlways), string(kubevirt.RunStrategyRerunOnFailure),
	string(kubevirt.RunStrategyManual), string(kubevirt.RunStrategyHalted), "Once",
	"virtio", "sata", "scsi", "usb",
}

// internTable is the process's table of packed strings. Readers
// (unpack) index strs lock-free below n; writers (pack) add under mu,
// publishing a string before the count that reveals it.
type internTable struct {
	mu    sync.RWMutex
	index map[string]uint32 // guarded by mu
	n     atomic.Uint32
	strs  [internMax]string
}

// interned is the process's table.
var interned = newInternTable(packedValues)

func newInternTable(seed []string) *internTable {
	t := &internTable{index: make(map[string]uint32, len(seed))}
	for _, s := range seed {
		t.lookup(s, true)
	}
	return t
}

// lookup returns s's index in the table; with add, s joins the table
// when it is not there and the table has room.
func (t *internTable) lookup(s string, add bool) (uint32, bool) {
	if len(s) > internMaxLen {
		return 0, false
	}
	t.mu.RLock()
	i, ok := t.index[s]
	t.mu.RUnlock()
	if ok || !add {
		return i, ok
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.index[s]; ok {
		return i, true
	}
	n := t.n.Load()
	if n == internMax {
		return 0, false
	}
	s = string([]byte(s)) // its own bytes, not those of the object packed
	t.strs[n] = s
	t.index[s] = n
	t.n.Store(n + 1)
	return n, true
}

// at is the string at index i, false when the table has none there.
func (t *internTable) at(i uint64) (string, bool) {
	if i >= uint64(t.n.Load()) {
		return "", false
	}
	return t.strs[i], true
}
