package media_test

import (
	"errors"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// testAddrPolicyConfigured: the address policy is configuration of the
// Service and the Reconciler, not process state. A Service given
// deny-private refuses a private literal IP that the default Service
// accepts; a Reconciler given deny-loopback fails the import of the test
// image server on 127.0.0.1 that every other test imports.
func testAddrPolicyConfigured(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	private := "http://10.1.2.3/image.iso"
	strict := newService(e.w, e.kube)
	strict.SetAddrPolicy(download.AddrPolicy{DenyPrivate: true})
	var bad *download.InvalidURLError
	if _, err := strict.Insert(t.Context(), key, slot, system.MediaInsert{Image: private}); !errors.As(err, &bad) {
		t.Fatalf("Insert %s under deny-private: %v, want an *InvalidURLError", private, err)
	}
	// Negative control: the default Service (and the process) is unchanged.
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: private}); err != nil {
		t.Fatalf("Insert %s under the default policy: %v", private, err)
	}
	if err := e.svc.Eject(t.Context(), key, slot); err != nil {
		t.Fatal(err)
	}

	_, stop := e.startReconciler(t, func(o *media.Options) { o.AddrPolicy = download.AddrPolicy{DenyLoopback: true} })
	defer stop()
	url, _ := e.img.add("/policy.iso", 1<<20, false)
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url}); err != nil {
		t.Fatal(err)
	}
	e.waitFailed(t, key, "refused loopback address")
}
