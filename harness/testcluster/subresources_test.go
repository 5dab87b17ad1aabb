package testcluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// putSubresource PUTs body to virt-api's subresource sub of VirtualMachine
// ns/name through kube-apiserver as cfg's identity.
func putSubresource(ctx context.Context, cfg *rest.Config, ns, name, sub, body string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	path := "/apis/subresources.kubevirt.io/v1/namespaces/" + ns + "/virtualmachines/" + name + "/" + sub
	raw, err := cs.Discovery().RESTClient().Put().AbsPath(path).SetHeader("Content-Type", "application/json").
		Body([]byte(body)).DoRaw(ctx)
	if err != nil && len(raw) > 0 {
		return fmt.Errorf("%w (answer %s)", err, raw)
	}
	return err
}

// testSubresourceStop: virt-api's aggregated API answers through
// kube-apiserver. PUT stop {"gracePeriod":0} on a running Manual VM
// patches its VMI's terminationGracePeriodSeconds to 0 and adds
// Stop(uid) to the VM's status.stateChangeRequests (seen in watch events:
// virt-controller acts on both at once); an identity without RBAC for
// virtualmachines/stop is forbidden and changes nothing.
func testSubresourceStop(t *testing.T, c *testcluster.Cluster, ns string, vms dynamic.ResourceInterface) {
	ctx := t.Context()
	vm := runnableVM("force-stop", []any{disk("rootdisk", 0)}, []any{pvcVolume("rootdisk")})
	spec := vm.Object["spec"].(map[string]any)
	spec["runStrategy"] = "Manual"
	spec["template"].(map[string]any)["spec"].(map[string]any)["terminationGracePeriodSeconds"] = int64(3600)
	if _, err := apply(t, vms, vm, author, false); err != nil {
		t.Fatal(err)
	}
	if err := putSubresource(ctx, c.Admin, ns, "force-stop", "start", `{}`); err != nil {
		t.Fatalf("PUT start: %v", err)
	}
	vmis := dynamic.NewForConfigOrDie(c.Admin).Resource(testcluster.VirtualMachineInstances).Namespace(ns)
	var vmi *unstructured.Unstructured
	testutil.Eventually(t, "virt-controller created the VMI", time.Minute, 100*time.Millisecond, func(ctx context.Context) error {
		var err error
		vmi, err = vmis.Get(ctx, "force-stop", metav1.GetOptions{})
		return err
	})
	// virt-api's stop reads the VM, then JSON-patches its stateChangeRequests
	// with a test of what it read: while virt-controller is still consuming
	// the Start, the test fails and virt-api answers 500 (a conflict it does
	// not recognise as one; virtapi.Client reports it as a 409). Stop once
	// the Start is consumed, as the bridge's force does on a running VM.
	testutil.Eventually(t, "virt-controller consumed the Start request", time.Minute, 100*time.Millisecond, func(ctx context.Context) error {
		got, err := vms.Get(ctx, "force-stop", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if reqs, _, _ := unstructured.NestedSlice(got.Object, "status", "stateChangeRequests"); len(reqs) > 0 {
			return fmt.Errorf("stateChangeRequests %v", reqs)
		}
		return nil
	})
	if g := vmiGrace(vmi); g != 3600 {
		t.Fatalf("VMI terminationGracePeriodSeconds = %d, want 3600 from the template", g)
	}

	nobody := rest.CopyConfig(c.Admin)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "no-rbac", Groups: []string{"system:authenticated"}}
	err := putSubresource(ctx, nobody, ns, "force-stop", "stop", `{"gracePeriod":0}`)
	if !apierrors.IsForbidden(err) {
		t.Errorf("PUT stop as an identity without RBAC: %v, want 403 forbidden", err)
	}
	if got, err := vmis.Get(ctx, "force-stop", metav1.GetOptions{}); err != nil || vmiGrace(got) != 3600 {
		t.Errorf("after the forbidden stop: VMI grace %d (err %v), want 3600", vmiGrace(got), err)
	}

	vmiWatch, err := vmis.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=force-stop", ResourceVersion: vmi.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer vmiWatch.Stop()
	vmWatch, err := vms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=force-stop", ResourceVersion: vmi.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer vmWatch.Stop()
	if err := putSubresource(ctx, c.Admin, ns, "force-stop", "stop", `{"gracePeriod":0}`); err != nil {
		t.Fatalf("PUT stop {gracePeriod:0}: %v", err)
	}
	awaitEvent(t, vmiWatch, "VMI terminationGracePeriodSeconds 0", func(o *unstructured.Unstructured) bool {
		return vmiGrace(o) == 0
	})
	awaitEvent(t, vmWatch, "Stop("+string(vmi.GetUID())+") in the VM's stateChangeRequests", func(o *unstructured.Unstructured) bool {
		reqs, _, _ := unstructured.NestedSlice(o.Object, "status", "stateChangeRequests")
		for _, r := range reqs {
			m, _ := r.(map[string]any)
			if m["action"] == "Stop" && m["uid"] == string(vmi.GetUID()) {
				return true
			}
		}
		return false
	})
}

// vmiGrace is a VMI's spec.terminationGracePeriodSeconds (-1 if unset).
func vmiGrace(vmi *unstructured.Unstructured) int64 {
	if vmi == nil {
		return -1
	}
	g, ok, _ := unstructured.NestedInt64(vmi.Object, "spec", "terminationGracePeriodSeconds")
	if !ok {
		return -1
	}
	return g
}

// awaitEvent reads w until an added or modified object satisfies match
// (a minute at most).
func awaitEvent(t *testing.T, w watch.Interface, what string, match func(*unstructured.Unstructured) bool) {
	t.Helper()
	timeout := time.After(time.Minute)
	var seen []string
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended before %s (saw %v)", what, seen)
			}
			o, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj {
				seen = append(seen, fmt.Sprintf("%s %T", ev.Type, ev.Object))
				continue
			}
			seen = append(seen, fmt.Sprintf("%s rv %s", ev.Type, o.GetResourceVersion()))
			if (ev.Type == watch.Added || ev.Type == watch.Modified) && match(o) {
				return
			}
		case <-timeout:
			t.Fatalf("no watch event with %s within a minute (saw %v)", what, seen)
		}
	}
}
