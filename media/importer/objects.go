package importer

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Import pod layout.
const (
	ImporterContainer = "importer"
	ImageMountPath    = "/image"
	ImageDest         = ImageMountPath + "/disk.img"
	importerUID       = 107 // KubeVirt's qemu user, so the image is readable by virt-launcher
	// ImportConfigPath is where the import pod mounts its import ConfigMap
	// (ImportConfigPath/ca) and Secret (ImportConfigPath/credentials).
	ImportConfigPath = "/etc/redfish-bridge/import"

	importCAPath          = ImportConfigPath + "/ca"
	importCredentialsPath = ImportConfigPath + "/credentials"
)

// ObjectLabels are the labels of the bridge's import objects of a slot.
func ObjectLabels(component, slot string) map[string]string {
	return map[string]string{
		LabelComponent: component,
		LabelPartOf:    PartOf,
		LabelSlot:      slot,
	}
}

// PodSelector selects the import pods of a slot ("" = all slots).
func PodSelector(slot string) labels.Selector {
	set := labels.Set{LabelComponent: ComponentImporter, LabelPartOf: PartOf}
	if slot != "" {
		set[LabelSlot] = slot
	}
	return labels.SelectorFromSet(set)
}

// PartOfSelector selects every object the bridge's media concern creates.
func PartOfSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelPartOf: PartOf})
}

// ClaimFor builds the PVC of a slot.
func ClaimFor(o Owner, slot system.MediaSlot, size resource.Quantity, storageClass string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:            slot.ClaimName,
			Namespace:       o.Key.Namespace,
			Labels:          ObjectLabels(ComponentMedia, slot.Slot),
			OwnerReferences: []metav1.OwnerReference{o.Ref()},
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

// PodFor builds the import pod of the slot's current insert, running req
// (its policy, timeout and size limits; URL, destination and trust come
// from the slot). The URL is one
// argv element of the bridge binary: no shell ever sees it. The slot's
// import ConfigMap (CAs) and Secret (credentials) are mounted read-only
// under [ImportConfigPath]; only their file paths are arguments.
func PodFor(o Owner, slot system.MediaSlot, image string, req download.ImportRequest) *corev1.Pod {
	l := ObjectLabels(ComponentImporter, slot.Slot)
	l[LabelInsertID] = slot.InsertID
	req.URL, req.Dest, req.SkipVerify = slot.Image, ImageDest, slot.Insecure
	mounts := []corev1.VolumeMount{{Name: "image", MountPath: ImageMountPath}}
	volumes := []corev1.Volume{{
		Name: "image",
		VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: slot.ClaimName},
		},
	}}
	if slot.ImportSecret != "" && slot.CABundle {
		req.CAFile = importCAPath + "/" + download.CAKey
		mounts = append(mounts, corev1.VolumeMount{Name: "import-ca", MountPath: importCAPath, ReadOnly: true})
		volumes = append(volumes, corev1.Volume{
			Name: "import-ca",
			VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: slot.ImportSecret}},
			},
		})
	}
	if slot.ImportSecret != "" && slot.Credentials {
		req.CredentialsDir = importCredentialsPath
		mounts = append(mounts, corev1.VolumeMount{Name: "import-secret", MountPath: importCredentialsPath, ReadOnly: true})
		volumes = append(volumes, corev1.Volume{
			Name: "import-secret",
			VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: slot.ImportSecret, DefaultMode: ptr.To[int32](0o440)},
			},
		})
	}
	if slot.CacheKey != "" {
		v, m := CacheVolume(slot.CacheKey)
		req.CacheDir = CacheMountPath
		volumes, mounts = append(volumes, v), append(mounts, m)
	}
	args := append([]string{"import"}, req.Args()...)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            PodName(slot.ClaimName, slot.InsertID),
			Namespace:       o.Key.Namespace,
			Labels:          l,
			OwnerReferences: []metav1.OwnerReference{o.Ref()},
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

// TerminationMessage is what an import pod left: the importer container's
// termination message, else the pod's status message or reason.
func TerminationMessage(p *corev1.Pod) string {
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
