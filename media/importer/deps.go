package importer

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Deps is what an import method gets from the reconciler: clients, its
// options, the reconciler's PVC cache, the image cache's lock and
// recency, counters and a way to enqueue a VM. Nothing else of the
// reconciler.
type Deps struct {
	Kube kubernetes.Interface
	// Dynamic reads and writes CDI DataVolumes; nil: no CDI.
	Dynamic dynamic.Interface
	Options Options
	// Claims are the reconciler's cached media and image cache PVCs.
	Claims ClaimLister
	// Cache orders the image cache's evictions and the creates of what
	// uses an entry, and remembers when each entry was last used; one per
	// reconciler, shared by its methods.
	Cache *Cache
	// Counters count what the methods did.
	Counters Counters
	// Enqueue asks for a reconcile of a VM (a waiter of a shared entry).
	Enqueue func(system.Key)
	// CacheRecords signs and verifies the image cache entries' digest
	// records ([CacheRecordPurpose]); the zero Key trusts no entry.
	CacheRecords objmac.Key
	// ImportPods signs and verifies the import pods the method creates
	// ([ImportPodPurpose], podmac.go); the zero Key leaves them to their
	// labels and owner reference.
	ImportPods objmac.Key
}

// CacheRecordPurpose is the [objmac.Derive] purpose of the image cache
// entries' digest records.
const CacheRecordPurpose = "image-cache-record"

// Options configure the import methods: part of media.Options, which
// fills their defaults.
type Options struct {
	// ImporterImage runs the import pods; default media.DefaultImporterImage
	// (the bridge's own image).
	ImporterImage string
	// AddrPolicy is what the import pods check on every connection (see
	// [download.AddrPolicy]); the zero value is the default policy.
	AddrPolicy download.AddrPolicy
	// StorageClass of the image PVCs; "" uses the cluster default.
	StorageClass string
	// DefaultSize is the size of an image PVC before the image's size is
	// known; an import pod that finds the image larger reports its size and
	// the PVC is re-created to fit. Default 8Gi.
	DefaultSize resource.Quantity
	// MaxImageSize in bytes fails the import of a larger image; default
	// [download.DefaultMaxImageSize], at most [download.MaxImageSizeLimit].
	MaxImageSize int64
	// ImportTimeout fails a Pending/Importing slot older than this; default 30m.
	ImportTimeout time.Duration
	// ImageCacheBudget bounds the image cache entries of each namespace
	// (bytes of their PVC requests; 0: no bound): a new entry first evicts
	// the least recently used entries no import pod is using (package
	// podimport; the CDI method's entries likewise, package cdiimport).
	ImageCacheBudget int64
}

// ClaimLister reads the reconciler's cached PVCs (the bridge's, by label).
type ClaimLister interface {
	// Claim is the cached PVC ns/name, nil when absent.
	Claim(ns, name string) (*corev1.PersistentVolumeClaim, error)
	// ClaimsOf lists the cached PVCs of ns that sel selects.
	ClaimsOf(ns string, sel labels.Selector) ([]*corev1.PersistentVolumeClaim, error)
}

// Counters count the methods' doings into the reconciler's Stats.
type Counters interface {
	PodCreated()
	ClaimCreated()
	StalePodDeleted()
	CacheEntryEvicted()
}

// Cache is the image cache's lock and recency: Lock orders the evictions
// and the creates of what uses an entry (an import pod mounting it, a
// clone reading it); Used and LastUsed keep when an import of this
// reconciler last used each entry, for the LRU. The zero value is ready.
type Cache struct {
	sync.Mutex
	usedMu sync.Mutex
	used   map[string]time.Time
}

// Used records that an import uses the entry ns/name now.
func (c *Cache) Used(ns, name string) {
	c.usedMu.Lock()
	defer c.usedMu.Unlock()
	if c.used == nil {
		c.used = map[string]time.Time{}
	}
	c.used[ns+"/"+name] = time.Now()
}

// LastUsed is when an import of this reconciler last used the entry
// ns/name, else (another leader's term) created.
func (c *Cache) LastUsed(ns, name string, created time.Time) time.Time {
	c.usedMu.Lock()
	defer c.usedMu.Unlock()
	if t, ok := c.used[ns+"/"+name]; ok {
		return t
	}
	return created
}
