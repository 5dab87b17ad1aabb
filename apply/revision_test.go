package apply

import (
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// versionsCache is a trimmed, versioned cache (as inventory.Inventory) of
// one VM and maybe its VMI that counts the whole objects it builds.
type versionsCache struct {
	vmRV, vmiRV string // "" = absent
	managedRV   string // the version whose managedFields are kept
	builds      atomic.Int64
}

func (c *versionsCache) object(gr string, rv string) (*unstructured.Unstructured, error) {
	c.builds.Add(1)
	if rv == "" {
		return nil, apierrors.NewNotFound(kubevirt.VirtualMachines.GroupResource(), gr)
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetResourceVersion(rv)
	return u, nil
}

func (c *versionsCache) VM(system.Key) (*unstructured.Unstructured, error) {
	return c.object("vm", c.vmRV)
}

func (c *versionsCache) VMI(system.Key) (*unstructured.Unstructured, error) {
	return c.object("vmi", c.vmiRV)
}

func (c *versionsCache) version(rv string) (string, error) {
	if rv == "" {
		return "", apierrors.NewNotFound(kubevirt.VirtualMachines.GroupResource(), "vm")
	}
	return rv, nil
}

func (c *versionsCache) VMResourceVersion(system.Key) (string, error)  { return c.version(c.vmRV) }
func (c *versionsCache) VMIResourceVersion(system.Key) (string, error) { return c.version(c.vmiRV) }

func (c *versionsCache) VMManagedFields(_ system.Key, rv string) ([]metav1.ManagedFieldsEntry, bool) {
	return nil, rv == c.managedRV
}

// TestRevisionBuildsNoObject: the Writer's Revision (what a kept System
// body's hit asks) over a versioned cache builds no VM and no VMI (the
// inventory unpacks one per read), and answers what it answered from the
// whole objects.
func TestRevisionBuildsNoObject(t *testing.T) {
	tests := []struct {
		name                   string
		vmRV, vmiRV, managedRV string
		want                   string
	}{
		{"running", "5", "7", "5", "5/7"},
		{"stopped", "5", "", "5", "5/"},
		{"no VM", "", "", "", ""},
		{"managedFields of another version: read live", "5", "7", "4", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &versionsCache{vmRV: tt.vmRV, vmiRV: tt.vmiRV, managedRV: tt.managedRV}
			w := New(nil, c, ModeAtomic, Options{})
			if got := w.Revision(system.Key{Namespace: "ns", Name: "vm"}); got != tt.want {
				t.Errorf("Revision = %q, want %q", got, tt.want)
			}
			if n := c.builds.Load(); n != 0 {
				t.Errorf("Revision built %d whole objects, want 0", n)
			}
		})
	}
}
