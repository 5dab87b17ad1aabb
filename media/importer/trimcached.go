package importer

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The import methods' informers select their objects by the bridge's
// labels, which anyone allowed to create pods, PVCs or DataVolumes in a
// watched namespace can copy: without a trim each replica would hold such
// an object whole (up to ~1.5 MiB of annotations, labels, managedFields
// and, for a pod, its spec). The transforms below keep what the methods
// read: identity, owners, the bridge's labels and annotations (values of
// at most [maxKeptValue] bytes), and of a pod its node and the importer
// container's status.

// maxKeptValue bounds a kept annotation's value: the bridge's own (a
// cache key, a validators record) are far shorter.
const maxKeptValue = 1 << 10

// keptLabels are the labels the methods select and read.
var keptLabels = []string{LabelComponent, LabelPartOf, LabelInsertID, LabelSlot, LabelImageCheck}

// keptAnnotations are the annotations the methods read; the CDI method
// adds its own ([TrimCached]'s extra).
var keptAnnotations = []string{AnnotationCacheKey}

// TrimCached is an informer transform for the import methods' cached
// objects (pods, PVCs, unstructured DataVolumes): see the comment above.
// extra names annotations kept besides [AnnotationCacheKey].
func TrimCached(extra ...string) func(obj any) (any, error) {
	annotations := append(append([]string(nil), keptAnnotations...), extra...)
	return func(obj any) (any, error) {
		switch o := obj.(type) {
		case *corev1.Pod:
			return trimPod(o, annotations), nil
		case *corev1.PersistentVolumeClaim:
			trimMeta(&o.ObjectMeta, annotations)
			return o, nil
		case *unstructured.Unstructured:
			trimUnstructured(o, annotations)
			return o, nil
		}
		return obj, nil
	}
}

// trimMeta keeps meta's identity, owners, finalizers and marks, and only
// the kept labels and annotations.
func trimMeta(meta *metav1.ObjectMeta, annotations []string) {
	meta.ManagedFields = nil
	meta.Labels = keep(meta.Labels, keptLabels)
	meta.Annotations = keep(meta.Annotations, annotations)
}

// keep is the entries of m named in names whose value is at most
// [maxKeptValue] bytes; nil when none.
func keep(m map[string]string, names []string) map[string]string {
	var out map[string]string
	for _, n := range names {
		if v, ok := m[n]; ok && len(v) <= maxKeptValue {
			if out == nil {
				out = make(map[string]string, len(names))
			}
			out[n] = v
		}
	}
	return out
}

// trimPod is what the methods read of an import or check pod: its
// metadata (trimmed), node, phase, message and the importer container's
// status (whose termination message is the import's report).
func trimPod(p *corev1.Pod, annotations []string) *corev1.Pod {
	kept := &corev1.Pod{ObjectMeta: p.ObjectMeta}
	trimMeta(&kept.ObjectMeta, annotations)
	kept.Spec.NodeName = p.Spec.NodeName
	kept.Status.Phase, kept.Status.Reason = p.Status.Phase, p.Status.Reason
	if len(p.Status.Message) <= maxKeptValue {
		kept.Status.Message = p.Status.Message
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == ImporterContainer {
			kept.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
			break
		}
	}
	return kept
}

// trimUnstructured trims a DataVolume's metadata as [trimMeta] does;
// its spec and status stay (CDI validates them).
func trimUnstructured(u *unstructured.Unstructured, annotations []string) {
	u.SetManagedFields(nil)
	u.SetLabels(keep(u.GetLabels(), keptLabels))
	u.SetAnnotations(keep(u.GetAnnotations(), annotations))
}
