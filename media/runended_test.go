package media

import (
	"context"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// noVMEvents is a VM event feed with nothing to say.
type noVMEvents struct{}

func (noVMEvents) AddVMHandler(func(system.Key)) (func() error, error) {
	return func() error { return nil }, nil
}

// TestRunEndedBeforeSync: a term that ends while the reconciler's caches
// sync (the Lease lost at once) makes Run return an error after stopping
// its informers, and the next term runs. Its informers never reach an
// apiserver (none listens at the address).
func TestRunEndedBeforeSync(t *testing.T) {
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Writer: struct{ apply.Writer }{}, Kube: kube, Events: noVMEvents{}, ImportMethod: ImportMethodPod,
		Controller: controller.New("media", controller.Options{})} // the terms' shared engine
	for term := 1; term <= 2; term++ {
		r, err := NewReconciler(opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := r.Run(ctx); err == nil {
			t.Errorf("term %d: Run of an ended term before its caches synced: no error", term)
		}
	}
}
