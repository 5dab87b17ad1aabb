package media

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Event reasons the media reconciler emits on VMs.
const (
	ReasonVolumeWithoutDisk = "MediaVolumeWithoutDisk"
	ReasonDiskWithoutVolume = "MediaDiskWithoutVolume"
)

// pairing lists the media-managed ("media-" prefixed) volumes that have no
// disk entry and disks that have no volume in the VM template.
func pairing(vm *unstructured.Unstructured) (volumesOnly, disksOnly []string) {
	disks, volumes := kubevirt.DisksOf(vm), kubevirt.VolumesOf(vm)
	for _, v := range volumes {
		if strings.HasPrefix(v.Name, apply.DiskPrefix) && !slices.ContainsFunc(disks, func(d kubevirt.Disk) bool { return d.Name == v.Name }) {
			volumesOnly = append(volumesOnly, v.Name)
		}
	}
	for _, d := range disks {
		if strings.HasPrefix(d.Name, apply.DiskPrefix) && !slices.ContainsFunc(volumes, func(v kubevirt.Volume) bool { return v.Name == d.Name }) {
			disksOnly = append(disksOnly, d.Name)
		}
	}
	return volumesOnly, disksOnly
}

// heal repairs a media volume without its disk (KubeVirt would attach the
// image as a writable disk) by re-applying the complete media intent, and
// reports a media disk without its volume.
func (r *Reconciler) heal(ctx context.Context, vm *apply.VM) error {
	volumesOnly, disksOnly := pairing(vm.Object)
	kept := apply.KeptDrives(vm) // empty on purpose, not disks missing their volume
	disksOnly = slices.DeleteFunc(disksOnly, func(name string) bool {
		return slices.ContainsFunc(kept, func(slot string) bool { return apply.DiskName(slot) == name })
	})
	var errs []error
	if len(volumesOnly) > 0 {
		msg := fmt.Sprintf("media volume(s) %s have no disk entry; re-applying the media intent", strings.Join(volumesOnly, ", "))
		logctx.From(ctx).WarnContext(ctx, "media volume without disk", "vm", vm.Key.String(), "volumes", volumesOnly)
		r.event(ctx, vm.Object, ReasonVolumeWithoutDisk, msg)
		reapplied := false
		_, err := r.opts.Writer.Media(ctx, vm.Key, func(fresh *apply.VM, _ map[string]system.MediaSlot) error {
			v, _ := pairing(fresh.Object)
			reapplied = len(v) > 0
			if !reapplied {
				return apply.ErrNoChange
			}
			return nil // unchanged intent: the apply restores what media owns
		})
		switch {
		case err != nil && !errors.Is(err, apply.ErrNoChange):
			errs = append(errs, fmt.Errorf("heal media volumes of %s: %w", vm.Key, err))
		case err == nil && reapplied:
			r.c.healed.Add(1)
		}
	}
	r.mu.Lock()
	prev, seen := r.reported[vm.Key]
	cur := strings.Join(disksOnly, ",")
	if cur == "" {
		delete(r.reported, vm.Key)
	} else {
		r.reported[vm.Key] = cur
	}
	r.mu.Unlock()
	if cur != "" && (!seen || prev != cur) {
		r.c.diskNoVol.Add(1)
		msg := fmt.Sprintf("media disk(s) %s have no volume", strings.Join(disksOnly, ", "))
		logctx.From(ctx).WarnContext(ctx, "media disk without volume", "vm", vm.Key.String(), "disks", disksOnly)
		r.event(ctx, vm.Object, ReasonDiskWithoutVolume, msg)
	}
	return errors.Join(errs...)
}

// event records a Warning event on the VM; failures are only logged.
func (r *Reconciler) event(ctx context.Context, vm *unstructured.Unstructured, reason, msg string) {
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: vm.GetName() + ".",
			Namespace:    vm.GetNamespace(),
		},
		InvolvedObject:      kubevirt.Reference(vm),
		Reason:              reason,
		Message:             msg,
		Type:                corev1.EventTypeWarning,
		Source:              corev1.EventSource{Component: "redfish-bridge"},
		ReportingController: "redfish-bridge.io/media",
		ReportingInstance:   "redfish-bridge",
		Action:              "Reconcile",
		FirstTimestamp:      now,
		LastTimestamp:       now,
		EventTime:           metav1.NewMicroTime(now.Time),
		Count:               1,
	}
	if _, err := r.opts.Kube.CoreV1().Events(vm.GetNamespace()).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		logctx.From(ctx).WarnContext(ctx, "record event", "vm", vm.GetNamespace()+"/"+vm.GetName(), "reason", reason, "err", err)
	}
}

// collect deletes import objects (pods, DataVolumes) and PVCs of slots that are no longer on the
// VM (an eject interrupted between its apply and its deletes, or a PVC made
// from a stale cache), once they are older than OrphanGrace and the VM no
// longer references the PVC.
func (r *Reconciler) collect(ctx context.Context, vm *apply.VM) (time.Duration, error) {
	o := owner{Key: vm.Key, UID: vm.Object.GetUID()}
	claims, err := r.listClaims(o)
	if err != nil {
		return 0, err
	}
	var objs []metav1.Object
	owners := map[metav1.Object]Importer{}
	for _, imp := range r.importers {
		l, err := imp.Orphans(o)
		if err != nil {
			return 0, err
		}
		for _, obj := range l {
			owners[obj] = imp
		}
		objs = append(objs, l...)
	}
	used := map[string]bool{}
	for _, v := range kubevirt.VolumesOf(vm.Object) {
		if v.Claim != "" {
			used[v.Claim] = true
		}
	}
	var after time.Duration
	orphan := func(m metav1.Object) bool {
		if _, ok := vm.Slots[m.GetLabels()[LabelSlot]]; ok || m.GetDeletionTimestamp() != nil {
			return false
		}
		if age := time.Since(m.GetCreationTimestamp().Time); age < r.opts.OrphanGrace {
			if d := r.opts.OrphanGrace - age + time.Second; after == 0 || d < after {
				after = d
			}
			return false
		}
		return true
	}
	var errs []error
	for _, obj := range objs {
		if orphan(obj) {
			errs = append(errs, owners[obj].Remove(ctx, obj))
		}
	}
	for _, c := range claims {
		if orphan(c) && !used[c.Name] {
			logctx.From(ctx).InfoContext(ctx, "deleting PVC of an empty slot", "vm", vm.Key.String(), "pvc", c.Name)
			if err := importer.DeleteClaim(ctx, r.opts.Kube, c); err != nil {
				errs = append(errs, err)
				continue
			}
			r.c.orphans.Add(1)
		}
	}
	return after, errors.Join(errs...)
}
