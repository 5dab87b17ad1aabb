package inventory

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// pvcResource names PVCs in NotFound errors.
var pvcResource = schema.GroupResource{Resource: "persistentvolumeclaims"}

// resyncPeriod is 0: handlers see real changes only; reconcilers requeue
// themselves when they need to.
const resyncPeriod = 0

// scope is the informers of one namespace ("" = all namespaces).
type scope struct {
	vms  cache.SharedIndexInformer
	vmis cache.SharedIndexInformer
	pvcs cache.SharedIndexInformer
}

// Inventory is the set of synced caches. Safe for concurrent use.
type Inventory struct {
	scopes map[string]*scope // by namespace; key "" when cluster-wide
	// membership counts VM adds, deletes and label changes ([Membership]).
	membership atomic.Uint64
	// owners are the cached VMs' managedFields (see trim.go).
	owners vmOwners
	// changes wakes the waiters on a VM's change ([Inventory.Changed]).
	changes changes
	// vmHandlers counts the VM handlers registered and not removed.
	vmHandlers atomic.Int64
}

// Start starts the informers for the given namespaces (all namespaces when
// namespaces is empty) and waits until they have synced or ctx ends. The
// informers stop when ctx ends.
func Start(ctx context.Context, dyn dynamic.Interface, kube kubernetes.Interface, namespaces []string) (*Inventory, error) {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	inv := &Inventory{scopes: make(map[string]*scope, len(namespaces)), owners: vmOwners{m: map[system.Key]vmOwnersEntry{}}}
	var synced []cache.InformerSynced
	for _, ns := range namespaces {
		if _, dup := inv.scopes[ns]; dup {
			continue
		}
		df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, resyncPeriod, ns, nil)
		kf := informers.NewSharedInformerFactoryWithOptions(kube, resyncPeriod, informers.WithNamespace(ns))
		s := &scope{
			vms:  df.ForResource(kubevirt.VirtualMachines).Informer(),
			vmis: df.ForResource(kubevirt.VirtualMachineInstances).Informer(),
			pvcs: kf.Core().V1().PersistentVolumeClaims().Informer(),
		}
		for inf, trim := range map[cache.SharedIndexInformer]cache.TransformFunc{s.vms: inv.trimVM, s.vmis: trimVMI, s.pvcs: trimPVC} {
			if err := inf.SetTransform(trim); err != nil {
				return nil, fmt.Errorf("inventory: trim cached objects: %w", err)
			}
		}
		for _, h := range []cache.ResourceEventHandler{inv.membershipHandler(), inv.forgetOwners()} {
			if _, err := s.vms.AddEventHandler(h); err != nil {
				return nil, fmt.Errorf("inventory: VM handler: %w", err)
			}
		}
		for _, inf := range []cache.SharedIndexInformer{s.vms, s.vmis} {
			if _, err := inf.AddEventHandler(inv.notifyHandler()); err != nil {
				return nil, fmt.Errorf("inventory: change notifier: %w", err)
			}
		}
		inv.scopes[ns] = s
		df.Start(ctx.Done())
		kf.Start(ctx.Done())
		synced = append(synced, s.vms.HasSynced, s.vmis.HasSynced, s.pvcs.HasSynced)
	}
	start := time.Now()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil, fmt.Errorf("inventory: caches of namespaces %q did not sync: %w", namespaces, context.Cause(ctx))
	}
	logctx.From(ctx).Info("inventory synced", "namespaces", namespaces, "took", time.Since(start))
	return inv, nil
}

// Membership changes whenever a VM is added or deleted or its labels
// change, once the cache shows the change (informer handlers run after the
// cache is updated): while it stays the same, the set of VMs [Inventory.ListVMs]
// returns for any namespace and selector stays the same.
func (inv *Inventory) Membership() uint64 { return inv.membership.Load() }

func (inv *Inventory) membershipHandler() cache.ResourceEventHandler {
	bump := func(any) { inv.membership.Add(1) }
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    bump,
		DeleteFunc: bump,
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(metav1.Object)
			c, ok2 := cur.(metav1.Object)
			if !ok1 || !ok2 || !maps.Equal(o.GetLabels(), c.GetLabels()) {
				bump(cur)
			}
		},
	}
}

// scopeOf returns the informers covering namespace ns, or nil.
func (inv *Inventory) scopeOf(ns string) *scope {
	if s, ok := inv.scopes[ns]; ok {
		return s
	}
	return inv.scopes[metav1.NamespaceAll]
}

// VM returns the cached VirtualMachine; an apierrors NotFound error when it
// does not exist or its namespace is not watched. The object is unpacked
// from the cache on each call ([packedObject]); its values may be shared
// with the cache: do not modify it.
func (inv *Inventory) VM(key system.Key) (*unstructured.Unstructured, error) {
	p, err := inv.packed(key, vmsOf)
	if err != nil {
		return nil, err
	}
	return p.Object()
}

// VMResourceVersion is the resourceVersion of the cached VM key, read
// without unpacking it; NotFound as [Inventory.VM].
func (inv *Inventory) VMResourceVersion(key system.Key) (string, error) {
	p, err := inv.packed(key, vmsOf)
	if err != nil {
		return "", err
	}
	return p.ResourceVersion, nil
}

// VMI returns the cached VirtualMachineInstance of the VM key (same
// namespace and name); NotFound when the VM is not running. Unpacked as
// [Inventory.VM].
func (inv *Inventory) VMI(key system.Key) (*unstructured.Unstructured, error) {
	p, err := inv.packed(key, vmisOf)
	if err != nil {
		return nil, err
	}
	return p.Object()
}

// VMIResourceVersion is the resourceVersion of the cached VMI key, read
// without unpacking it; NotFound as [Inventory.VMI].
func (inv *Inventory) VMIResourceVersion(key system.Key) (string, error) {
	p, err := inv.packed(key, vmisOf)
	if err != nil {
		return "", err
	}
	return p.ResourceVersion, nil
}

// informerOf picks a scope's VM or VMI informer and names its resource.
type informerOf struct {
	gr   schema.GroupResource
	pick func(*scope) cache.SharedIndexInformer
}

var (
	vmsOf  = informerOf{kubevirt.VirtualMachines.GroupResource(), func(s *scope) cache.SharedIndexInformer { return s.vms }}
	vmisOf = informerOf{kubevirt.VirtualMachineInstances.GroupResource(), func(s *scope) cache.SharedIndexInformer { return s.vmis }}
)

func (inv *Inventory) packed(key system.Key, of informerOf) (*packedObject, error) {
	obj, err := inv.getObject(key, of.gr, of.pick)
	if err != nil {
		return nil, err
	}
	p, ok := obj.(*packedObject)
	if !ok {
		return nil, fmt.Errorf("inventory: %s %s: unexpected type %T", of.gr, key, obj)
	}
	return p, nil
}

func (inv *Inventory) getObject(key system.Key, gr schema.GroupResource, pick func(*scope) cache.SharedIndexInformer) (any, error) {
	s := inv.scopeOf(key.Namespace)
	if s == nil {
		return nil, apierrors.NewNotFound(gr, key.Name)
	}
	obj, ok, err := pick(s).GetIndexer().GetByKey(key.String())
	if err != nil {
		return nil, fmt.Errorf("inventory: get %s %s: %w", gr, key, err)
	}
	if !ok {
		return nil, apierrors.NewNotFound(gr, key.Name)
	}
	return obj, nil
}

// ListVMs lists the identities (namespace, name, labels, resourceVersion)
// of the cached VirtualMachines of namespace ("" = every watched
// namespace) matching selector (nil = everything), without unpacking
// them: [Inventory.VM] reads one whole. They are shared with the cache: do
// not modify them.
func (inv *Inventory) ListVMs(namespace string, selector labels.Selector) ([]metav1.Object, error) {
	if selector == nil {
		selector = labels.Everything()
	}
	var out []metav1.Object
	for ns, s := range inv.scopes {
		if namespace != "" && ns != metav1.NamespaceAll && ns != namespace {
			continue
		}
		var err error
		appendVM := func(obj any) {
			c, ok := obj.(*packedObject)
			if !ok {
				err = fmt.Errorf("inventory: list VMs: unexpected type %T", obj)
				return
			}
			out = append(out, c)
		}
		if namespace == "" {
			err = cache.ListAll(s.vms.GetIndexer(), selector, appendVM)
		} else {
			err = cache.ListAllByNamespace(s.vms.GetIndexer(), namespace, selector, appendVM)
		}
		if err != nil {
			return nil, fmt.Errorf("inventory: list VMs in %q: %w", namespace, err)
		}
	}
	return out, nil
}

// PVC returns the cached PersistentVolumeClaim, trimmed (trimPVC), a new
// object per call; NotFound when absent.
func (inv *Inventory) PVC(namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	s := inv.scopeOf(namespace)
	if s == nil {
		return nil, apierrors.NewNotFound(pvcResource, name)
	}
	obj, ok, err := s.pvcs.GetIndexer().GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, fmt.Errorf("inventory: get PVC %s/%s: %w", namespace, name, err)
	}
	if !ok {
		return nil, apierrors.NewNotFound(pvcResource, name)
	}
	c, ok := obj.(*cachedPVC)
	if !ok {
		return nil, fmt.Errorf("inventory: PVC %s/%s: unexpected type %T", namespace, name, obj)
	}
	return c.PVC(), nil
}
