package vmcheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Disk is one disk of a VM template or VMI spec as the firmware sees it.
type Disk = kubevirt.Disk

// Disks lists a (template or VMI) spec's disks: those with a bootOrder
// first, ascending (the order the firmware tries them), then the rest in
// list order.
func Disks(spec map[string]any) []Disk {
	out := kubevirt.SpecDisksOf(spec)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].BootOrder, out[j].BootOrder
		if a == 0 || b == 0 {
			return a != 0 && b == 0
		}
		return a < b
	})
	return out
}

// Volumes maps a spec's volume names to their PVC claim ("" for volumes of
// other kinds).
func Volumes(spec map[string]any) map[string]string {
	out := map[string]string{}
	for _, v := range kubevirt.SpecVolumesOf(spec) {
		out[v.Name] = v.Claim
	}
	return out
}

// EmptyDrive reports whether d is a CD slot's drive without a volume in
// vols: the empty CD-ROM drive the bridge keeps in the template after an
// eject (apply/build_hotplug.go), a drive by design, not a disk missing
// its volume.
func EmptyDrive(d Disk, vols map[string]string) bool {
	slot, media := strings.CutPrefix(d.Name, apply.DiskPrefix)
	_, has := vols[d.Name]
	return media && d.CDROM && !has && system.KindOf(slot) == system.SlotCD
}

// TemplateSpec returns a VM's spec.template.spec.
func TemplateSpec(vm *unstructured.Unstructured) (map[string]any, error) {
	spec, _, err := unstructured.NestedMap(vm.Object, kubevirt.TemplateSpec...)
	if err != nil {
		return nil, fmt.Errorf("VM %s template spec: %w", vm.GetName(), err)
	}
	return spec, nil
}

// VolumePhase is the phase of the VMI's volumeStatus entry name, "" when
// it has none (a hotplugged volume is Ready once the guest has it).
func VolumePhase(vmi *unstructured.Unstructured, name string) string {
	statuses, _, _ := unstructured.NestedSlice(vmi.Object, "status", "volumeStatus")
	for _, s := range statuses {
		if m, _ := s.(map[string]any); m["name"] == name {
			p, _ := m["phase"].(string)
			return p
		}
	}
	return ""
}

// Phase returns a VMI's status.phase, "" for nil.
func Phase(vmi *unstructured.Unstructured) string { return string(kubevirt.PhaseOf(vmi)) }

// Slot decodes the VM's media annotation for slot (zero if none).
func Slot(vm *unstructured.Unstructured, slot string) (system.MediaSlot, error) {
	var s system.MediaSlot
	raw, ok := vm.GetAnnotations()[apply.AnnotationMediaPrefix+slot]
	if !ok {
		return s, nil
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return s, fmt.Errorf("VM %s: media annotation %q: %w", vm.GetName(), raw, err)
	}
	return s, nil
}

// MediaObjects lists the import pods ("pod/<name>", any pod but a
// virt-launcher mounting the slot's claim) and the media PVC ("pvc/<name>")
// of a VM's slot: what the bridge leaves behind. A running guest's
// virt-launcher pod is not among them: it keeps a claim ejected from the
// template mounted until the VM restarts (KubeVirt changes a running
// VMI's volumes only at restart; see docs/testing-kubevirt.md).
func MediaObjects(ctx context.Context, kube kubernetes.Interface, key system.Key, slot string) ([]string, error) {
	claim := media.ClaimName(key, slot)
	launcher, err := labels.Parse(sim.LauncherSelector)
	if err != nil {
		return nil, fmt.Errorf("launcher selector: %w", err)
	}
	var out []string
	pods, err := kube.CoreV1().Pods(key.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods in %s: %w", key.Namespace, err)
	}
	for _, p := range pods.Items {
		if launcher.Matches(labels.Set(p.Labels)) {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				out = append(out, "pod/"+p.Name)
			}
		}
	}
	_, err = kube.CoreV1().PersistentVolumeClaims(key.Namespace).Get(ctx, claim, metav1.GetOptions{})
	switch {
	case err == nil:
		out = append(out, "pvc/"+claim)
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get PVC %s/%s: %w", key.Namespace, claim, err)
	}
	return out, nil
}

// FileSHA256 is the hex sha256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path) // a test's own image file
	if err != nil {
		return "", fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
