package service_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/service"
)

// TestLeaseLost takes the Lease away from a running leader (another holder
// writes it, as after a partition): the replica stops its reconcilers,
// keeps serving Redfish and health, and leads again once the foreign
// holder's lease expires. The reconcilers' engine counters add up over
// both terms (the second term's replay counts on top of the first's).
func TestLeaseLost(t *testing.T) {
	e := newEnv(t, crds.Stock)
	a := e.start(t, "replica-a")
	eventually(t, "replica-a to lead", a.Leading)
	passes := func() float64 {
		return value(scrape(t, a.MetricsAddr), "redfish_bridge_controller_reconciles_total", map[string]string{"controller": "power", "result": "success"})
	}
	eventually(t, "power's first term reconciles the VM", func() bool { return passes() >= 1 })

	admin := kubernetes.NewForConfigOrDie(e.c.Admin)
	leases := admin.CoordinationV1().Leases(e.c.BridgeNamespace)
	intruder, seconds := "intruder", int32(4)
	// The leader renews every 200 ms: retry the read-modify-write on 409.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease, err := leases.Get(t.Context(), service.DefaultLeaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := *lease.Spec.HolderIdentity; got != "replica-a" {
			t.Fatalf("lease holder %q, want replica-a", got)
		}
		now := metav1.NewMicroTime(time.Now())
		lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: &intruder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now}
		_, err = leases.Update(t.Context(), lease, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replica-a to stop leading", func() bool { return !a.Leading() })
	first := passes()
	if code, _ := e.call(t, a, http.MethodGet, "/redfish/v1/Systems/"+e.ns+".vm-0", nil); code != http.StatusOK {
		t.Errorf("Redfish while not leading: %d", code)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code := status(t, "http://"+a.MetricsAddr+path); code != http.StatusOK {
			t.Errorf("%s while not leading: %d", path, code)
		}
	}
	if got := value(scrape(t, a.MetricsAddr), "redfish_bridge_leader", nil); got != 0 {
		t.Errorf("leader gauge while not leading = %v", got)
	}
	eventually(t, "replica-a to lead again after the intruder's lease expired", a.Leading)
	eventually(t, fmt.Sprintf("power's passes to add up over the terms (first term %v)", first), func() bool { return passes() > first })
	lease, err := leases.Get(t.Context(), service.DefaultLeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := *lease.Spec.HolderIdentity; got != "replica-a" {
		t.Errorf("lease holder %q, want replica-a", got)
	}
	if got := value(scrape(t, a.MetricsAddr), "redfish_bridge_leader", nil); got != 1 {
		t.Errorf("leader gauge = %v, want 1", got)
	}
}

func status(t *testing.T, url string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
