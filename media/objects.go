package media

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Import pod layout.
const (
	ImporterContainer = "importer"
	ImageMountPath    = "/image"
	ImageDest         = ImageMountPath + "/disk.img"
	importerUID       = 107 // KubeVirt's qemu user, so the image is readable by virt-launcher
)

const mi = 1 << 20

// minClaimBytes is the smallest PVC the bridge asks for.
const minClaimBytes = 64 * mi

// ClaimSize turns an image size (from HEAD Content-Length; <= 0 unknown)
// into a PVC request: the size plus 10% rounded up to a whole Mi, at least
// 64Mi; def when the size is unknown.
func ClaimSize(contentLength int64, def resource.Quantity) resource.Quantity {
	if contentLength <= 0 {
		return def.DeepCopy()
	}
	want := contentLength + (contentLength+9)/10
	want = (want + mi - 1) / mi * mi
	want = max(want, minClaimBytes)
	return *resource.NewQuantity(want, resource.BinarySI)
}

// owner is the VM an import object belongs to.
type owner struct {
	key system.Key
	uid types.UID
}

func (o owner) ref() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         "kubevirt.io/v1",
		Kind:               "VirtualMachine",
		Name:               o.key.Name,
		UID:                o.uid,
		Controller:         ptr.To(false),
		BlockOwnerDeletion: ptr.To(false),
	}
}

func objectLabels(component, slot string) map[string]string {
	return map[string]string{
		LabelComponent: component,
		LabelPartOf:    PartOf,
		LabelSlot:      slot,
	}
}

// importerSelector selects the import pods of a slot ("" = all slots).
func importerSelector(slot string) labels.Selector {
	set := labels.Set{LabelComponent: ComponentImporter, LabelPartOf: PartOf}
	if slot != "" {
		set[LabelSlot] = slot
	}
	return labels.SelectorFromSet(set)
}

// partOfSelector selects every object the bridge's media concern creates.
func partOfSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelPartOf: PartOf})
}

// claimFor builds the PVC of a slot.
func claimFor(o owner, slot system.MediaSlot, size resource.Quantity, storageClass string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:            slot.ClaimName,
			Namespace:       o.key.Namespace,
			Labels:          objectLabels(ComponentMedia, slot.Slot),
			OwnerReferences: []metav1.OwnerReference{o.ref()},
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:  ptr.To(corev1.PersistentVolumeFilesystem),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
	}
	if storageClass != "" {
		pvc.Spec.StorageClassName = ptr.To(storageClass)
	}
	return pvc
}

// podFor builds the import pod of the slot's current insert. The URL is one
// argv element of the bridge binary: no shell ever sees it. The slot's
// import Secret (CAs, credentials) is mounted read-only at
// [ImportConfigPath]; only its file paths are arguments.
func podFor(o owner, slot system.MediaSlot, image string, timeoutSeconds int64) *corev1.Pod {
	l := objectLabels(ComponentImporter, slot.Slot)
	l[LabelInsertID] = slot.InsertID
	req := ImportRequest{
		URL:        slot.Image,
		Dest:       ImageDest,
		Policy:     CurrentAddrPolicy(),
		Timeout:    time.Duration(timeoutSeconds) * time.Second,
		SkipVerify: slot.Insecure,
	}
	mounts := []corev1.VolumeMount{{Name: "image", MountPath: ImageMountPath}}
	volumes := []corev1.Volume{{
		Name: "image",
		VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: slot.ClaimName},
		},
	}}
	if slot.ImportSecret != "" {
		if slot.CABundle {
			req.CAFile = ImportConfigPath + "/" + CAKey
		}
		if slot.Credentials {
			req.CredentialsDir = ImportConfigPath
		}
		mounts = append(mounts, corev1.VolumeMount{Name: "import-secret", MountPath: ImportConfigPath, ReadOnly: true})
		volumes = append(volumes, corev1.Volume{
			Name: "import-secret",
			VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: slot.ImportSecret, DefaultMode: ptr.To[int32](0o440)},
			},
		})
	}
	args := append([]string{"import"}, req.Args()...)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            PodName(slot.ClaimName, slot.InsertID),
			Namespace:       o.key.Namespace,
			Labels:          l,
			OwnerReferences: []metav1.OwnerReference{o.ref()},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			EnableServiceLinks:           ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](importerUID),
				RunAsGroup:     ptr.To[int64](importerUID),
				FSGroup:        ptr.To[int64](importerUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:                     ImporterContainer,
				Image:                    image,
				Command:                  []string{"redfish-bridge"},
				Args:                     args,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("10m"),
						corev1.ResourceMemory: resource.MustParse("32Mi"),
					},
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				VolumeMounts: mounts,
			}},
			Volumes: volumes,
		},
	}
}

// ownedBy reports whether obj has an ownerReference to the VM named name.
func ownedBy(obj metav1.Object, name string) bool {
	n, ok := ownerName(obj)
	return ok && n == name
}

// ownerName returns the name of obj's owning VirtualMachine.
func ownerName(obj metav1.Object) (string, bool) {
	for _, r := range obj.GetOwnerReferences() {
		if r.Kind == "VirtualMachine" && r.APIVersion == "kubevirt.io/v1" {
			return r.Name, true
		}
	}
	return "", false
}

// terminationMessage is what an import pod left: the importer container's
// termination message, else the pod's status message or reason.
func terminationMessage(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == ImporterContainer && cs.State.Terminated != nil {
			t := cs.State.Terminated
			if t.Message != "" {
				return t.Message
			}
			if t.Reason != "" {
				return fmt.Sprintf("%s (exit code %d)", t.Reason, t.ExitCode)
			}
			return fmt.Sprintf("exit code %d", t.ExitCode)
		}
	}
	if p.Status.Message != "" {
		return p.Status.Message
	}
	return p.Status.Reason
}
