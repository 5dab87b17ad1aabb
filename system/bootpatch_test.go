package system

import (
	"reflect"
	"testing"
)

// TestBootPatchEveryField sets each field of a BootPatch alone: the patch
// is not Empty, and MergeInto sets the BootOverride field of the same name
// to its value and no other. A field added to BootPatch and forgotten in
// Empty or MergeInto fails here.
func TestBootPatchEveryField(t *testing.T) {
	typ := reflect.TypeFor[BootPatch]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			var patch BootPatch
			v := reflect.New(f.Type.Elem())
			v.Elem().SetString("x") // every field points to a string kind
			reflect.ValueOf(&patch).Elem().Field(i).Set(v)
			if patch.Empty() {
				t.Errorf("a patch of %s alone is Empty", f.Name)
			}
			var got BootOverride
			patch.MergeInto(&got)
			var want BootOverride
			w := reflect.ValueOf(&want).Elem().FieldByName(f.Name)
			if !w.IsValid() {
				t.Fatalf("BootOverride has no field %s", f.Name)
			}
			w.SetString("x")
			if got != want {
				t.Errorf("MergeInto of %s alone = %+v, want %+v", f.Name, got, want)
			}
		})
	}
	if !(BootPatch{}).Empty() {
		t.Error("the zero BootPatch is not Empty")
	}
}
