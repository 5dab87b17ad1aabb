package sim

import "testing"

// TestBootDevice: the lowest bootOrder across disks and interfaces wins;
// without any, the first disk.
func TestBootDevice(t *testing.T) {
	disk := func(name string, order int64) map[string]any {
		d := map[string]any{"name": name}
		if order > 0 {
			d["bootOrder"] = order
		}
		return d
	}
	spec := func(disks, ifaces []any) map[string]any {
		return map[string]any{"domain": map[string]any{"devices": map[string]any{"disks": disks, "interfaces": ifaces}}}
	}
	tests := []struct {
		name string
		spec map[string]any
		want string
	}{
		{"no bootOrder: first disk", spec([]any{disk("rootdisk", 0), disk("media-cd0", 0)}, nil), "rootdisk"},
		{"CD-ROM first", spec([]any{disk("rootdisk", 2), disk("media-cd0", 1)}, nil), "media-cd0"},
		{"PXE first", spec([]any{disk("rootdisk", 2)}, []any{disk("default", 1)}), "default"},
		{"nothing", spec(nil, nil), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BootDevice(tt.spec); got != tt.want {
				t.Errorf("BootDevice = %q, want %q", got, tt.want)
			}
		})
	}
}
