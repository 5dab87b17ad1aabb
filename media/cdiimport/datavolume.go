package cdiimport

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// CDI's DataVolume in CDI's own words: built as a typed
// cdiv1beta1.DataVolume and converted for the dynamic client, read back
// the same way.

// asDataVolume reads a DataVolume from what the dynamic client returns.
func asDataVolume(u *unstructured.Unstructured) (*cdiv1beta1.DataVolume, error) {
	var dv cdiv1beta1.DataVolume
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &dv); err != nil {
		return nil, fmt.Errorf("decode DataVolume %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return &dv, nil
}

// unstructuredDataVolume is dv as the dynamic client writes it.
func unstructuredDataVolume(dv *cdiv1beta1.DataVolume) (*unstructured.Unstructured, error) {
	dv.APIVersion, dv.Kind = cdiv1beta1.SchemeGroupVersion.String(), DataVolumeKind
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dv)
	if err != nil {
		return nil, fmt.Errorf("encode DataVolume %s/%s: %w", dv.Namespace, dv.Name, err)
	}
	if st, ok := obj["status"].(map[string]any); ok && len(st) == 0 {
		delete(obj, "status") // a new one's: CDI writes it
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// dataVolumeFor builds the DataVolume of the slot's current insert: an
// http source.
func dataVolumeFor(o importer.Owner, slot system.MediaSlot, size resource.Quantity, storageClass string) *cdiv1beta1.DataVolume {
	// Never a secretRef: CDI's importer sends its credentials on every
	// redirect, to any host ([cdiImporter.Refuses]).
	http := &cdiv1beta1.DataVolumeSourceHTTP{URL: slot.Image}
	if slot.ImportSecret != "" && slot.CABundle {
		http.CertConfigMap = slot.ImportSecret
	}
	return slotDataVolume(o, slot, cdiv1beta1.DataVolumeSource{HTTP: http}, size, storageClass)
}

// slotDataVolume builds the DataVolume of the slot's current insert,
// filled from src.
func slotDataVolume(o importer.Owner, slot system.MediaSlot, src cdiv1beta1.DataVolumeSource, size resource.Quantity, storageClass string) *cdiv1beta1.DataVolume {
	l := importer.ObjectLabels(importer.ComponentMedia, slot.Slot)
	l[importer.LabelInsertID] = slot.InsertID
	return &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:            slot.ClaimName,
			Namespace:       o.Key.Namespace,
			Labels:          l,
			Annotations:     map[string]string{annDeleteAfterCompletion: "false"},
			OwnerReferences: []metav1.OwnerReference{o.Ref()},
		},
		Spec: cdiv1beta1.DataVolumeSpec{Source: &src, Storage: storageSpec(size, storageClass)},
	}
}

// storageSpec is the storage a DataVolume of the bridge requests.
func storageSpec(size resource.Quantity, storageClass string) *cdiv1beta1.StorageSpec {
	s := &cdiv1beta1.StorageSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		VolumeMode:  ptr.To(corev1.PersistentVolumeFilesystem),
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
	}
	if storageClass != "" {
		s.StorageClassName = ptr.To(storageClass)
	}
	return s
}
