package inventory

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// TestPackInternsRepeatedStrings: a map key and a common value are packed
// as an index in the table of strings kept once (a VM's packed string
// holds none of its keys' bytes), and the unpacked strings are the table's
// (no copy per object); a value not in the table is packed as is.
func TestPackInternsRepeatedStrings(t *testing.T) {
	obj := map[string]any{"apiVersion": "kubevirt.io/v1", "a-rather-long-label-key.example.com/role": "vm-4242-unique-name"}
	packed, err := pack(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"apiVersion", "kubevirt.io/v1", "a-rather-long-label-key.example.com/role"} {
		if strings.Contains(packed, s) {
			t.Errorf("packed object holds %q's bytes, want its index in the table", s)
		}
	}
	if !strings.Contains(packed, "vm-4242-unique-name") {
		t.Error("a value not in the table is not packed as is")
	}
	got, err := unpack(packed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(obj, got); diff != "" {
		t.Errorf("unpack(pack(obj)) (-want +got):\n%s", diff)
	}
	for k := range got {
		if i, ok := interned.lookup(k, false); !ok || unsafe.StringData(interned.strs[i]) != unsafe.StringData(k) {
			t.Errorf("unpacked key %q is not the table's string", k)
		}
	}
}

// TestInternTableBounded: a full table takes no more strings, and keys
// and values it cannot take are packed as they are and unpack equal; an
// index the table does not hold is a malformed packed string.
func TestInternTableBounded(t *testing.T) {
	saved := interned
	t.Cleanup(func() { interned = saved })
	interned = newInternTable(nil)
	for i := range internMax {
		if _, ok := interned.lookup(fmt.Sprintf("k%d", i), true); !ok {
			t.Fatalf("table refused string %d of %d", i, internMax)
		}
	}
	if _, ok := interned.lookup("one-too-many", true); ok {
		t.Errorf("a full table (%d strings) took one more", internMax)
	}
	obj := map[string]any{"one-too-many": "k7", "k1": map[string]any{"k2": strings.Repeat("x", internMaxLen+1)}}
	packed, err := pack(obj)
	if err != nil {
		t.Fatal(err)
	}
	got, err := unpack(packed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(obj, got); diff != "" {
		t.Errorf("unpack(pack(obj)) with a full table (-want +got):\n%s", diff)
	}
	key := binary.AppendUvarint([]byte{tagMap, 1}, internMax<<1|1) // the key at index internMax
	beyond := string(append(key, tagNil))
	if _, err := unpack(beyond); err == nil {
		t.Error("unpack of a key indexed past the table: no error")
	}
	if _, err := unpack(string([]byte{tagMap, 1, 2, 'a', tagInterned, 0x80, 0x20})); err == nil {
		t.Error("unpack of a value indexed past the table: no error")
	}
}

// TestPackConcurrent: objects packed and unpacked at once, each with keys
// new to the table, unpack equal to what was packed (run with -race: the
// table's readers take no lock).
func TestPackConcurrent(t *testing.T) {
	const workers, objects = 4, 200
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := range objects {
				obj := map[string]any{fmt.Sprintf("concurrent-key-%d-%d", w, i): "kubevirt.io/v1", "apiVersion": fmt.Sprint(i)}
				packed, err := pack(obj)
				if err == nil {
					var got map[string]any
					if got, err = unpack(packed); err == nil && !cmp.Equal(obj, got) {
						err = fmt.Errorf("unpack(pack(%v)) = %v", obj, got)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
