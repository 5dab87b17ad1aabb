package media

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPairing(t *testing.T) {
	vm := func(disks, volumes []string) *unstructured.Unstructured {
		var d, v []any
		for _, n := range disks {
			d = append(d, map[string]any{"name": n})
		}
		for _, n := range volumes {
			v = append(v, map[string]any{"name": n})
		}
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"domain":  map[string]any{"devices": map[string]any{"disks": d}},
			"volumes": v,
		}}}}}
	}
	tests := []struct {
		name                   string
		disks, volumes         []string
		volumesOnly, disksOnly []string
	}{
		{"paired", []string{"rootdisk", "media-cd0"}, []string{"rootdisk", "media-cd0"}, nil, nil},
		{"lost disk (production corruption)", []string{"rootdisk"}, []string{"rootdisk", "media-cd0"}, []string{"media-cd0"}, nil},
		{"lost volume", []string{"rootdisk", "media-cd0"}, []string{"rootdisk"}, nil, []string{"media-cd0"}},
		{"not ours", []string{"rootdisk"}, []string{"rootdisk", "cloudinit"}, nil, nil},
		{"empty VM", nil, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, d := pairing(vm(tt.disks, tt.volumes))
			if diff := cmp.Diff(tt.volumesOnly, v); diff != "" {
				t.Errorf("volumes without disk (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.disksOnly, d); diff != "" {
				t.Errorf("disks without volume (-want +got):\n%s", diff)
			}
		})
	}
}
