package testcluster_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// testPolicy checks the admission policy rejects what KubeVirt's webhook
// rejects, and only that.
func testPolicy(t *testing.T, vms dynamic.ResourceInterface) {
	tests := []struct {
		name    string
		vm      *unstructured.Unstructured
		wantMsg string // "" means admitted
	}{
		{
			name: "valid VM",
			vm: vmBody("valid",
				[]any{disk("rootdisk", 2), cdrom("cdrom0", "sata")},
				[]any{iface("default", 3)},
				[]any{pvcVolume("rootdisk"), pvcVolume("cdrom0")}),
		},
		{
			name: "no devices lists at all",
			vm:   vmBody("empty", nil, nil, nil),
		},
		{
			// KubeVirt accepts it and attaches the volume as a disk: the
			// corruption the simulator reports, not the apiserver.
			name: "volume without disk admitted",
			vm:   vmBody("orphan-volume", []any{disk("rootdisk", 0)}, nil, []any{pvcVolume("rootdisk"), pvcVolume("cdrom0")}),
		},
		{
			name: "empty CD-ROM without volume admitted",
			vm:   vmBody("empty-cdrom", []any{disk("rootdisk", 0), cdrom("cdrom0", "scsi")}, nil, []any{pvcVolume("rootdisk")}),
		},
		{
			name:    "disk without volume",
			vm:      vmBody("lost-volume", []any{disk("rootdisk", 0), disk("data", 0)}, nil, []any{pvcVolume("rootdisk")}),
			wantMsg: "disks[name=data]: " + testcluster.MsgDiskWithoutVolume,
		},
		{
			name: "duplicate bootOrder disk and interface",
			vm: vmBody("dup-boot-iface", []any{disk("rootdisk", 1)}, []any{iface("default", 1)},
				[]any{pvcVolume("rootdisk")}),
			wantMsg: testcluster.MsgDuplicateBoot + " (duplicate: 1)",
		},
		{
			name: "duplicate bootOrder between disks",
			vm: vmBody("dup-boot-disks", []any{disk("rootdisk", 2), disk("data", 2)}, nil,
				[]any{pvcVolume("rootdisk"), pvcVolume("data")}),
			wantMsg: testcluster.MsgDuplicateBoot + " (duplicate: 2)",
		},
		{
			name:    "CD-ROM on virtio",
			vm:      vmBody("virtio-cdrom", []any{cdrom("cdrom0", "virtio")}, nil, []any{pvcVolume("cdrom0")}),
			wantMsg: "disks[name=cdrom0]: " + testcluster.MsgCDROMVirtio,
		},
		{
			name: "disk bootOrder 0",
			vm: vmBody("boot-zero", []any{map[string]any{"name": "rootdisk", "disk": map[string]any{}, "bootOrder": int64(0)}}, nil,
				[]any{pvcVolume("rootdisk")}),
			wantMsg: testcluster.MsgBootOrderPositive,
		},
		{
			name:    "interface bootOrder -1",
			vm:      vmBody("boot-negative", []any{disk("rootdisk", 0)}, []any{iface("default", -1)}, []any{pvcVolume("rootdisk")}),
			wantMsg: testcluster.MsgBootOrderPositive,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := apply(t, vms, tt.vm, author, false)
			checkAdmission(t, err, tt.wantMsg)
		})
	}

	// Updates are checked too: the author re-applying without its volume
	// (omission deletes) would leave a plain disk without volume.
	t.Run("update that drops a disk's volume", func(t *testing.T) {
		name := "update"
		if _, err := apply(t, vms, vmBody(name, []any{disk("rootdisk", 0)}, nil, []any{pvcVolume("rootdisk")}), author, false); err != nil {
			t.Fatal(err)
		}
		_, err := apply(t, vms, vmBody(name, []any{disk("rootdisk", 0)}, nil, []any{}), author, false)
		checkAdmission(t, err, "disks[name=rootdisk]: "+testcluster.MsgDiskWithoutVolume)
	})
}

func checkAdmission(t *testing.T, err error, wantMsg string) {
	t.Helper()
	switch {
	case wantMsg == "" && err != nil:
		t.Errorf("rejected: %v, want admitted", err)
	case wantMsg == "":
	case err == nil:
		t.Errorf("admitted, want rejected with %q", wantMsg)
	case !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), testcluster.PolicyName) || !strings.Contains(err.Error(), wantMsg):
		t.Errorf("err = %v, want 422 from policy %s with %q", err, testcluster.PolicyName, wantMsg)
	}
}
