package cdiimport

import (
	"fmt"
	"math"
	"strconv"
	"strings"

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

// dataVolumeSize is the storage a DataVolume requests: the claim size, at
// most the maximum image size. CDI makes the whole request usable (it adds
// its filesystem overhead to the PVC it creates) and fails an import whose
// image does not fit, so no image above the maximum is imported where the
// storage enforces the PVC's size.
func dataVolumeSize(claim resource.Quantity, maxBytes int64) resource.Quantity {
	if maxBytes > 0 && claim.Value() > maxBytes {
		return *resource.NewQuantity(maxBytes, resource.BinarySI)
	}
	return claim
}

// reasonImporterError is the Running condition's reason CDI copies from
// an importer container that exited non-zero.
const reasonImporterError = "Error"

// dataVolumeStatus reads a DataVolume's status: phase Succeeded, Failed,
// or an importer that failed (CDI retries it forever: the first failure
// fails the insert, as the import pod's does), else its progress. The
// importer's failure is read from the Running condition (False, reason
// Error, the importer's termination message) as soon as its container
// ends, before the kubelet restarts it: once restarted, CDI clears that
// message ("Pod is running") and only restartCount is left.
func dataVolumeStatus(dv *cdiv1beta1.DataVolume) importer.Status {
	st := importer.Status{State: importer.Running, Started: dv.CreationTimestamp.Time}
	switch {
	case dv.Status.Phase == cdiv1beta1.Succeeded:
		st.State = importer.Succeeded
	case dv.Status.Phase == cdiv1beta1.Failed || dv.Status.RestartCount > 0 || importerFailed(dv):
		st.State = importer.Failed
		st.Reason = fmt.Sprintf("CDI DataVolume %s failed: %s", dv.Name, dataVolumeMessage(dv))
	default:
		st.Percent = parseProgress(string(dv.Status.Progress))
	}
	return st
}

// importerFailed reports whether the DataVolume's Running condition says
// its importer container ended with an error (reason Error, the kubelet's
// reason for a non-zero exit).
func importerFailed(dv *cdiv1beta1.DataVolume) bool {
	for _, c := range dv.Status.Conditions {
		if c.Type == cdiv1beta1.DataVolumeRunning && c.Status == corev1.ConditionFalse && c.Reason == reasonImporterError {
			return true
		}
	}
	return false
}

// dataVolumeMessage is the message of the DataVolume's Running condition
// (where CDI puts the importer's error), else of its Ready condition.
func dataVolumeMessage(dv *cdiv1beta1.DataVolume) string {
	msgs := map[cdiv1beta1.DataVolumeConditionType]string{}
	for _, c := range dv.Status.Conditions {
		msg := c.Message
		if msg == "" {
			msg = c.Reason
		}
		msgs[c.Type] = msg
	}
	for _, typ := range []cdiv1beta1.DataVolumeConditionType{cdiv1beta1.DataVolumeRunning, cdiv1beta1.DataVolumeReady} {
		if msgs[typ] != "" {
			return msgs[typ]
		}
	}
	return "phase " + string(dv.Status.Phase)
}

// parseProgress reads CDI's status.progress ("45.2%", "N/A") as a whole
// percentage below 100 (0: unknown); 100 is for the finished import.
func parseProgress(s string) int {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0
	}
	return int(min(math.Floor(f), 99))
}
