package fields

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	bridgemedia "github.com/redfish-bridge/redfish-bridge/media"
)

// ManagerServe is the field manager the apiserver records for the objects
// media creates without a fieldManager: the served binary's user agent
// ("redfish-bridge/<version>", cmd/redfish-bridge/serve.go) up to the "/".
// Whatever the name, the manager owning the part-of label (the creator) is
// counted as the bridge's too (a bridge built into another binary, e.g. a
// test's, is recorded under that binary's name).
const ManagerServe = "redfish-bridge"

// StatusWriters are Kubernetes' controllers that write the status (and,
// for kube-controller-manager, the binding annotations) of the objects the
// bridge creates: the PVC binder, the scheduler and the kubelet.
var StatusWriters = []string{"kube-controller-manager", "kube-scheduler", "kubelet"}

// Object is one object the bridge made for the VM: it carries the
// part-of label and an ownerReference to the VM.
type Object struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Role is what the object is for, from its component label.
	Role     string          `json:"role"`
	Managers []ObjectManager `json:"managers"`
}

// ObjectManager is one managedFields entry of an [Object].
type ObjectManager struct {
	Name        string `json:"name"`
	Operation   string `json:"operation"`
	Subresource string `json:"subresource,omitempty"`
	Bridge      bool   `json:"bridge"`
}

// objectResources are the kinds of object the bridge creates beside a VM.
// DataVolumes exist only where CDI's CRD is served.
var objectResources = []struct {
	kind     string
	resource schema.GroupVersionResource
}{
	{"PersistentVolumeClaim", schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}},
	{"DataVolume", bridgemedia.DataVolumeResource},
	{"Pod", schema.GroupVersionResource{Version: "v1", Resource: "pods"}},
	{"Secret", schema.GroupVersionResource{Version: "v1", Resource: "secrets"}},
	{"ConfigMap", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
}

// ListObjects lists the objects in namespace carrying the bridge's part-of
// label (of every kind, for [InspectObjects] to pick the VM's). A
// DataVolume resource that is not served is skipped; a kind the caller may
// not list (the bridge's own identity may not list Secrets) is skipped
// with a note saying so.
func ListObjects(ctx context.Context, dyn dynamic.Interface, namespace string) ([]unstructured.Unstructured, []string, error) {
	sel := labels.SelectorFromSet(labels.Set{bridgemedia.LabelPartOf: bridgemedia.PartOf}).String()
	var out []unstructured.Unstructured
	var notes []string
	for _, r := range objectResources {
		l, err := dyn.Resource(r.resource).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		switch {
		case apierrors.IsNotFound(err) && r.resource == bridgemedia.DataVolumeResource:
			continue
		case apierrors.IsForbidden(err):
			notes = append(notes, fmt.Sprintf("%ss not listed (forbidden to this identity): the bridge's among them are missing", r.kind))
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("list %s in %s: %w", r.resource.Resource, namespace, err)
		}
		for _, u := range l.Items {
			if u.GetKind() == "" {
				u.SetKind(r.kind)
			}
			out = append(out, u)
		}
	}
	return out, notes, nil
}

// InspectObjects adds to r the objects among objs that belong to vm (the
// part-of label and an ownerReference to vm's UID), sorted by kind and
// name, and a "foreign" deviation per managedFields entry of a PVC, pod,
// Secret or ConfigMap that is not the bridge's (see the package doc).
func InspectObjects(r *Report, vm *unstructured.Unstructured, objs []unstructured.Unstructured) {
	r.Objects = []Object{}
	for i := range objs {
		u := &objs[i]
		if u.GetLabels()[bridgemedia.LabelPartOf] != bridgemedia.PartOf || !ownedBy(u, vm) {
			continue
		}
		o := Object{Kind: u.GetKind(), Name: u.GetName(), Role: role(u), Managers: []ObjectManager{}}
		for _, mf := range u.GetManagedFields() {
			m := ObjectManager{Name: mf.Manager, Operation: string(mf.Operation), Subresource: mf.Subresource,
				Bridge: mf.Manager == ManagerServe || IsBridge(mf.Manager) || createdBy(mf)}
			o.Managers = append(o.Managers, m)
			if u.GetDeletionTimestamp() != nil {
				continue // finalizers are removed by whoever guards them
			}
			if d, ok := checkObject(o, m); ok {
				r.Deviations = append(r.Deviations, d)
			}
		}
		r.Objects = append(r.Objects, o)
	}
	slices.SortFunc(r.Objects, func(a, b Object) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
}

// checkObject is the "foreign" rule: on a PVC, pod, Secret or ConfigMap of
// the bridge's, only the bridge's managers (its creator among them),
// [StatusWriters] and writers of the status subresource. Objects being
// deleted are not checked. DataVolumes are listed only: CDI's controller
// writes their metadata under a name that depends on its build.
func checkObject(o Object, m ObjectManager) (Deviation, bool) {
	if o.Kind == "DataVolume" || m.Bridge || m.Subresource == "status" || slices.Contains(StatusWriters, m.Name) {
		return Deviation{}, false
	}
	return Deviation{Manager: m.Name, Path: o.Kind + "/" + o.Name, Kind: "foreign",
		Detail: fmt.Sprintf("%s (%s) is the bridge's: only %s, %s and status writers should write it", o.Kind, o.Role, ManagerServe, apply.ManagerMedia)}, true
}

// createdBy reports whether the entry owns the part-of label: the
// entry of the object's creator (media sets the label at create, under
// the binary's user agent, [ManagerServe] in the served image).
func createdBy(mf metav1.ManagedFieldsEntry) bool {
	if mf.FieldsV1 == nil || mf.Subresource != "" {
		return false
	}
	var f struct {
		Metadata struct {
			Labels map[string]json.RawMessage `json:"f:labels"`
		} `json:"f:metadata"`
	}
	if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &f); err != nil {
		return false
	}
	_, ok := f.Metadata.Labels["f:"+bridgemedia.LabelPartOf]
	return ok
}

func ownedBy(u, vm *unstructured.Unstructured) bool {
	return slices.ContainsFunc(u.GetOwnerReferences(), func(ref metav1.OwnerReference) bool {
		return ref.Kind == kubevirt.Kind && ref.Name == vm.GetName() && ref.UID == vm.GetUID()
	})
}

// role names what the object is for from media's component label.
func role(u *unstructured.Unstructured) string {
	l := u.GetLabels()
	slot := ""
	if s := l[bridgemedia.LabelSlot]; s != "" {
		slot = " " + s
	}
	switch c := l[bridgemedia.LabelComponent]; c {
	case bridgemedia.ComponentMedia:
		return "media slot" + slot
	case bridgemedia.ComponentImporter:
		if l[bridgemedia.LabelImageCheck] != "" {
			return "check pod" + slot
		}
		return "import pod" + slot
	case bridgemedia.ComponentImageCache:
		if u.GetKind() == "ConfigMap" {
			return "cache entry CAs"
		}
		return "cache entry"
	case bridgemedia.ComponentImportSecret:
		return "import secret" + slot
	case bridgemedia.ComponentTrust:
		return "trust bundle" + slot
	default:
		return c
	}
}
