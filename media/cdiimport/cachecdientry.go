package cdiimport

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The CDI image cache's entries (cachecdi.go): their DataVolume and CA
// ConfigMap, lookup, deletion and eviction under the budget.

// entryDataVolume builds the CDI cache entry name of the slot's key and
// the checked version v, owned by the VM whose insert creates it.
func entryDataVolume(o importer.Owner, slot system.MediaSlot, name string, v download.Validators, certs string, size resource.Quantity, storageClass string) *cdiv1beta1.DataVolume {
	b, _ := json.Marshal(v)
	return &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: o.Key.Namespace,
			Labels:    map[string]string{importer.LabelComponent: importer.ComponentImageCache, importer.LabelPartOf: importer.PartOf},
			Annotations: map[string]string{
				importer.AnnotationCacheKey: slot.CacheKey, AnnotationCacheValidators: string(b),
				annDeleteAfterCompletion: "false",
			},
			OwnerReferences: []metav1.OwnerReference{o.Ref()},
		},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source:  &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: slot.Image, CertConfigMap: certs}},
			Storage: storageSpec(size, storageClass),
		},
	}
}

// entryCA gives the entry its own copy of the slot's import ConfigMap
// (the CAs, part of the key): the insert's goes when the insert ends, the
// entry's import may outlive it. "" when the slot trusts no extra CA.
func (c *cdiImporter) entryCA(ctx context.Context, t importer.Target, entry string) (string, error) {
	slot, ns := t.Slot, t.Owner.Key.Namespace
	if slot.ImportSecret == "" || !slot.CABundle {
		return "", nil
	}
	api := c.d.Kube.CoreV1().ConfigMaps(ns)
	src, err := api.Get(ctx, slot.ImportSecret, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("import ConfigMap %s/%s of %s: %w", ns, slot.ImportSecret, t.Owner.Key, err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: entry + "-ca", Namespace: ns, OwnerReferences: []metav1.OwnerReference{t.Owner.Ref()},
			Labels: map[string]string{importer.LabelComponent: importer.ComponentImageCache, importer.LabelPartOf: importer.PartOf},
		},
		Data: src.Data,
	}
	_, err = api.Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		live, gerr := api.Get(ctx, cm.Name, metav1.GetOptions{})
		if gerr != nil {
			return "", fmt.Errorf("get image cache ConfigMap %s/%s: %w", ns, cm.Name, gerr)
		}
		if live.Labels[importer.LabelComponent] != importer.ComponentImageCache || !maps.Equal(live.Data, cm.Data) {
			return "", &importer.ForeignClaimError{Namespace: ns, Name: cm.Name, VM: t.Owner.Key, Kind: "image cache ConfigMap"}
		}
		err = nil
	}
	if err != nil {
		return "", fmt.Errorf("create image cache ConfigMap %s/%s: %w", ns, cm.Name, err)
	}
	return cm.Name, nil
}

// deleteEntry deletes a CDI cache entry (its PVC goes with it) and its CA
// ConfigMap.
func (c *cdiImporter) deleteEntry(ctx context.Context, u *unstructured.Unstructured) error {
	if err := c.deleteDataVolume(ctx, u); err != nil {
		return err
	}
	err := c.d.Kube.CoreV1().ConfigMaps(u.GetNamespace()).Delete(ctx, u.GetName()+"-ca", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete image cache ConfigMap %s/%s-ca: %w", u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// evict makes room for a new entry of need in the namespace under
// the image cache budget, as the pod method (package podimport) does for its
// method's entries: least recently used first, never an entry still
// importing (inserts wait for it) nor one a clone in progress reads (a
// live list: a slot DataVolume with the entry as source.pvc that has not
// Succeeded). When the live list already holds the entry to be created (a
// pass that read a cache without it: its previous pass created it), it
// needs no room and nothing is evicted: counting it twice would evict
// another entry. Called with cacheMu held.
func (c *cdiImporter) evict(ctx context.Context, ns, entry string, need resource.Quantity) error {
	budget := c.d.Options.ImageCacheBudget
	if budget <= 0 {
		return nil
	}
	l, err := c.d.Dynamic.Resource(DataVolumeResource).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: importer.PartOfSelector().String()})
	if err != nil {
		return fmt.Errorf("list DataVolumes of %s: %w", ns, err)
	}
	total, inUse := need.Value(), map[string]bool{}
	var entries []*cdiv1beta1.DataVolume
	for i := range l.Items {
		dv, err := asDataVolume(&l.Items[i])
		if err != nil || dv.DeletionTimestamp != nil {
			continue
		}
		if dv.Name == entry {
			return nil
		}
		switch dv.Labels[importer.LabelComponent] {
		case importer.ComponentMedia:
			if src := dv.Spec.Source; src != nil && src.PVC != nil && src.PVC.Namespace == ns && dv.Status.Phase != cdiv1beta1.Succeeded {
				inUse[src.PVC.Name] = true
			}
		case importer.ComponentImageCache:
			if dv.Annotations[importer.AnnotationCacheKey] == "" || dv.Spec.Storage == nil {
				continue
			}
			if st := dataVolumeStatus(dv).State; st != importer.Succeeded && st != importer.Failed {
				inUse[dv.Name] = true
			}
			total += dv.Spec.Storage.Resources.Requests.Storage().Value()
			entries = append(entries, dv)
		}
	}
	slices.SortFunc(entries, func(a, b *cdiv1beta1.DataVolume) int {
		return c.d.Cache.LastUsed(ns, a.Name, a.CreationTimestamp.Time).Compare(c.d.Cache.LastUsed(ns, b.Name, b.CreationTimestamp.Time))
	})
	for _, dv := range entries {
		if total <= budget {
			break
		}
		if inUse[dv.Name] {
			continue
		}
		u, err := unstructuredDataVolume(dv)
		if err != nil {
			return err
		}
		if err := c.deleteEntry(ctx, u); err != nil {
			return err
		}
		q := dv.Spec.Storage.Resources.Requests.Storage()
		total -= q.Value()
		c.d.Counters.CacheEntryEvicted()
		logctx.From(ctx).InfoContext(ctx, "image cache entry evicted (least recently used)", "namespace", ns, "dataVolume", dv.Name, "size", q.String())
	}
	if total > budget {
		logctx.From(ctx).InfoContext(ctx, "image cache over its budget: the other entries are in use", "namespace", ns, "bytes", total, "budget", budget)
	}
	return nil
}

// entry is the cached DataVolume ns/name; nil when absent.
func (c *cdiImporter) entry(ns, name string) (*unstructured.Unstructured, error) {
	for _, l := range c.listers {
		obj, err := l.ByNamespace(ns).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get DataVolume %s/%s: %w", ns, name, err)
		}
		u, _ := obj.(*unstructured.Unstructured)
		return u, nil
	}
	return nil, nil
}

// anyVersion is the version of an entry of key in ns, else v: with
// revalidation off (the tests' negative control) an entry of the key is
// used whatever the server says.
func (c *cdiImporter) anyVersion(ns, key string, v download.Validators) download.Validators {
	for _, l := range c.listers {
		objs, _ := l.ByNamespace(ns).List(importer.CacheSelector())
		for _, obj := range objs {
			u, ok := obj.(*unstructured.Unstructured)
			var old download.Validators
			if ok && u.GetAnnotations()[importer.AnnotationCacheKey] == key &&
				json.Unmarshal([]byte(u.GetAnnotations()[AnnotationCacheValidators]), &old) == nil {
				return old
			}
		}
	}
	return v
}
