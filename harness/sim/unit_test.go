package sim_test

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/sim"
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
		})
	}
}
