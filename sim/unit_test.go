package sim_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/sim"
)

func TestProblems(t *testing.T) {
	disk := func(name string) any { return map[string]any{"name": name, "disk": map[string]any{"bus": "virtio"}} }
	cdrom := func(name string) any { return map[string]any{"name": name, "cdrom": map[string]any{"bus": "sata"}} }
	vol := func(name string) any {
		return map[string]any{"name": name, "persistentVolumeClaim": map[string]any{"claimName": name}}
	}
	spec := func(disks, volumes []any) map[string]any {
		return map[string]any{"domain": map[string]any{"devices": map[string]any{"disks": disks}}, "volumes": volumes}
	}
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{name: "paired", spec: spec([]any{disk("rootdisk"), cdrom("cdrom0")}, []any{vol("rootdisk"), vol("cdrom0")})},
		{name: "empty cdrom", spec: spec([]any{disk("rootdisk"), cdrom("cdrom0")}, []any{vol("rootdisk")})},
		{name: "no lists", spec: map[string]any{}},
		{
			name: "volume without disk (the lost CD-ROM disk)",
			spec: spec([]any{disk("rootdisk")}, []any{vol("rootdisk"), vol("cdrom0")}),
			want: []string{"volume cdrom0 has no disk: attached as a writable disk"},
		},
		{
			name: "disk without volume, and atomic replace of both lists",
			spec: spec([]any{cdrom("cdrom0"), disk("data")}, []any{vol("rootdisk")}),
			want: []string{"disk data has no volume", "volume rootdisk has no disk: attached as a writable disk"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, sim.Problems(tt.spec)); diff != "" {
				t.Errorf("Problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	macRE := regexp.MustCompile(`^02(:[0-9a-f]{2}){5}$`)
	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	tests := []struct{ a, b [3]string }{
		{a: [3]string{"ns", "vm", "default"}, b: [3]string{"ns", "vm2", "default"}},
		{a: [3]string{"ns", "vm", "default"}, b: [3]string{"ns2", "vm", "default"}},
		{a: [3]string{"ns", "vm", "default"}, b: [3]string{"ns", "vm", "pxe"}},
		{a: [3]string{"a", "b-c", "x"}, b: [3]string{"a-b", "c", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.a[0]+"/"+tt.a[1]+" vs "+tt.b[0]+"/"+tt.b[1], func(t *testing.T) {
			ma, mb := sim.MAC(tt.a[0], tt.a[1], tt.a[2]), sim.MAC(tt.b[0], tt.b[1], tt.b[2])
			if !macRE.MatchString(ma) || ma != sim.MAC(tt.a[0], tt.a[1], tt.a[2]) {
				t.Errorf("MAC %q: want a stable locally administered unicast address", ma)
			}
			if ma == mb {
				t.Errorf("MAC(%v) == MAC(%v) == %s", tt.a, tt.b, ma)
			}
			ua := sim.FirmwareUUID(tt.a[0], tt.a[1])
			if !uuidRE.MatchString(ua) || ua != sim.FirmwareUUID(tt.a[0], tt.a[1]) {
				t.Errorf("FirmwareUUID %q: want a stable uuid v5", ua)
			}
			if (tt.a[0] != tt.b[0] || tt.a[1] != tt.b[1]) && ua == sim.FirmwareUUID(tt.b[0], tt.b[1]) {
				t.Errorf("FirmwareUUID(%v) == FirmwareUUID(%v)", tt.a, tt.b)
			}
		})
	}
}

func TestPrintableStatus(t *testing.T) {
	deleting := metav1.NewTime(time.Now())
	vm := func(strategy string, gone bool) *unstructured.Unstructured {
		u := newVM("ns", "vm", strategy)
		if gone {
			u.SetDeletionTimestamp(&deleting)
		}
		return u
	}
	vmi := func(phase string, gone bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": phase}}}
		if gone {
			u.SetDeletionTimestamp(&deleting)
		}
		return u
	}
	tests := []struct {
		name string
		vm   *unstructured.Unstructured
		vmi  *unstructured.Unstructured
		want string
	}{
		{"no VMI", vm("Always", false), nil, "Stopped"},
		{"new VMI", vm("Always", false), vmi("", false), "Starting"},
		{"scheduled", vm("Always", false), vmi("Scheduled", false), "Starting"},
		{"running", vm("Always", false), vmi("Running", false), "Running"},
		{"stopping", vm("Halted", false), vmi("Running", true), "Stopping"},
		{"VM deleted", vm("Always", true), vmi("Running", true), "Terminating"},
		{"guest shut down", vm("RerunOnFailure", false), vmi("Succeeded", false), "Stopped"},
		{"failed, restarting", vm("Always", false), vmi("Failed", false), "CrashLoopBackOff"},
		{"failed, rerun", vm("RerunOnFailure", false), vmi("Failed", false), "CrashLoopBackOff"},
		{"failed once", vm("Once", false), vmi("Failed", false), "Stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(sim.PrintableStatus(tt.vm, tt.vmi)); got != tt.want {
				t.Errorf("PrintableStatus = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRestartRequired(t *testing.T) {
	vm := newVM("ns", "vm", "Always")
	vmi, err := sim.BuildVMI(vm)
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(vmi.Object, "Running", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	changed := vm.DeepCopy()
	disks, _, _ := unstructured.NestedSlice(changed.Object, "spec", "template", "spec", "domain", "devices", "disks")
	disks[0].(map[string]any)["bootOrder"] = int64(1)
	if err := unstructured.SetNestedSlice(changed.Object, disks, "spec", "template", "spec", "domain", "devices", "disks"); err != nil {
		t.Fatal(err)
	}
	relabeled := vm.DeepCopy()
	if err := unstructured.SetNestedField(relabeled.Object, "other", "spec", "template", "metadata", "labels", "app"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		vm   *unstructured.Unstructured
		want string
	}{
		{"same template", vm, ""},
		{"bootOrder changed", changed, "True"},
		{"only template labels changed", relabeled, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, err := sim.VMStatus(tt.vm, vmi, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := condition(&unstructured.Unstructured{Object: map[string]any{"status": status}}, "RestartRequired")
			if got != tt.want {
				t.Errorf("RestartRequired = %q, want %q", got, tt.want)
			}
		})
	}
}
