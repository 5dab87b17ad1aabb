package importer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTrimCached: of a pod, PVC or DataVolume carrying the bridge's labels
// (anyone allowed to create one can copy them) with ~1 MiB of foreign
// labels, annotations, managedFields and spec, the import methods'
// informers hold only what the methods read.
func TestTrimCached(t *testing.T) {
	big := strings.Repeat("x", 256<<10)
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: "p", Namespace: "ns", UID: "u", ResourceVersion: "3",
			Labels:          map[string]string{LabelComponent: ComponentImporter, LabelPartOf: PartOf, LabelSlot: "cd0", "foreign": "y"},
			Annotations:     map[string]string{AnnotationCacheKey: "k", "foreign": big, AnnotationCacheKey + "-not": "z"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "VirtualMachine", Name: "vm", UID: "vu"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl", FieldsV1: metav1.NewFieldsV1(`"` + big + `"`)}},
		}
	}
	want := metav1.ObjectMeta{
		Name: "p", Namespace: "ns", UID: "u", ResourceVersion: "3",
		Labels:          map[string]string{LabelComponent: ComponentImporter, LabelPartOf: PartOf, LabelSlot: "cd0"},
		Annotations:     map[string]string{AnnotationCacheKey: "k"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "VirtualMachine", Name: "vm", UID: "vu"}},
	}
	importer := corev1.ContainerStatus{Name: ImporterContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: `{"bytes":1}`}}}
	pod := &corev1.Pod{
		ObjectMeta: meta(),
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{
			{Name: ImporterContainer, Env: []corev1.EnvVar{{Name: "E", Value: big}}},
			{Name: "other"},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, Message: big, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "other", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: big}}}, importer,
		}},
	}
	trim := TrimCached()
	got, err := trim(pod)
	if err != nil {
		t.Fatal(err)
	}
	wantPod := &corev1.Pod{ObjectMeta: want, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{importer}}}
	if diff := cmp.Diff(wantPod, got); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: meta(), Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	if got, _ := trim(pvc); !cmp.Equal(got, &corev1.PersistentVolumeClaim{ObjectMeta: want, Status: pvc.Status}) {
		t.Errorf("PVC (-want +got):\n%s", cmp.Diff(&corev1.PersistentVolumeClaim{ObjectMeta: want, Status: pvc.Status}, got))
	}
	dv := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"source": "s"}}}
	m := meta()
	dv.SetName(m.Name)
	dv.SetLabels(m.Labels)
	dv.SetAnnotations(map[string]string{AnnotationCacheKey: "k", "validators": "v", "foreign": big})
	dv.SetManagedFields(m.ManagedFields)
	got, _ = TrimCached("validators")(dv)
	u := got.(*unstructured.Unstructured)
	if diff := cmp.Diff(map[string]string{AnnotationCacheKey: "k", "validators": "v"}, u.GetAnnotations()); diff != "" {
		t.Errorf("DataVolume annotations (-want +got):\n%s", diff)
	}
	if u.GetManagedFields() != nil || u.GetLabels()["foreign"] != "" || u.Object["spec"] == nil {
		t.Errorf("DataVolume trimmed to %v", u.Object)
	}
}
