package inventory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fixtureVM is testdata/vm.json decoded as the informer decodes it.
func fixtureVM(t testing.TB) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "vm.json"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := decodeUnstructured(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o.(*unstructured.Unstructured)
}

// TestPackRoundTrips: a VM (whole, and compact) and every kind of value
// JSON decodes to unpack equal to what was packed; a value of another
// type is refused; a cut packed string is an error, not a panic.
func TestPackRoundTrips(t *testing.T) {
	vm := fixtureVM(t)
	compact, _ := CompactVM(vm)
	tests := []struct {
		name string
		obj  map[string]any
	}{
		{"whole VM", vm.Object},
		{"compact VM", compact.Object},
		{"scalars", map[string]any{"nil": nil, "t": true, "f": false, "i": int64(-300), "big": int64(1) << 62,
			"x": 1.5, "s": "", "u": "ünïcode", "m": map[string]any{}, "l": []any{}, "nested": []any{map[string]any{"a": []any{int64(1), "b"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			packed, err := pack(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			got, err := unpack(packed)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.obj, got); diff != "" {
				t.Errorf("unpack(pack(obj)) (-want +got):\n%s", diff)
			}
			for i := range len(packed) {
				if _, err := unpack(packed[:i]); err == nil {
					t.Fatalf("unpack of the first %d of %d bytes: no error", i, len(packed))
				}
			}
		})
	}
	if _, err := pack(map[string]any{"n": 1}); err == nil {
		t.Error("pack of an int (not a JSON-decoded value): no error")
	}
}

// BenchmarkUnpackVM is what a read of a cached VM costs (Inventory.VM).
func BenchmarkUnpackVM(b *testing.B) {
	compact, _ := CompactVM(fixtureVM(b))
	c := newPackedObject(compact)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Object(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPackedObjectIdentity: a packed object's typed identity is its
// metadata's (labels included), an object without metadata packs without
// a panic, and one holding a value pack refuses is kept as is.
func TestPackedObjectIdentity(t *testing.T) {
	vm := fixtureVM(t)
	compact, _ := CompactVM(vm)
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{"compact VM", compact},
		{"no metadata", &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}},
		{"unpackable value", &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "x", "namespace": "ns", "labels": map[string]any{"a": "b"}}, "n": 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPackedObject(tt.obj)
			for _, c := range []struct{ field, got, want string }{
				{"name", p.GetName(), tt.obj.GetName()},
				{"namespace", p.GetNamespace(), tt.obj.GetNamespace()},
				{"uid", string(p.GetUID()), string(tt.obj.GetUID())},
				{"resourceVersion", p.GetResourceVersion(), tt.obj.GetResourceVersion()},
			} {
				if c.got != c.want {
					t.Errorf("%s = %q, want %q", c.field, c.got, c.want)
				}
			}
			if diff := cmp.Diff(tt.obj.GetLabels(), p.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			got, err := p.Object()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.obj.Object, got.Object); diff != "" {
				t.Errorf("unpacked (-want +got):\n%s", diff)
			}
		})
	}
}
