package ironic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// stepTimeout bounds every wait of one step (generous: two conductors and
// two demos share a loaded machine).
const stepTimeout = 2 * time.Minute

// callbackTimeout is how long the conductor waits for an agent that never
// calls (deploy and clean).
const callbackTimeout = 25 * time.Second

// node is one Ironic node enrolled on one sample VM of one variant.
type node struct {
	s       *suite
	variant crds.Variant
	env     *demo.Env
	rec     *recorder
	forces  *forceCounter
	dyn     dynamic.Interface
	kube    kubernetes.Interface
	key     system.Key
	uuid    string
}

// enroll creates the node of the sample VM of scenario (vmIndex) with the
// given deploy interface and extra driver_info, checks it is in enroll,
// and arranges for its diagnostics to be printed if the test fails.
func (s *suite) enroll(t *testing.T, v crds.Variant, scenario int, deploy string, driverInfo map[string]any) *node {
	t.Helper()
	return s.enrollVM(t, v, fmt.Sprintf("vm-%d", s.vmIndex(v, scenario)), deploy, driverInfo)
}

// enrollVM is enroll for the VM named vm in the demo namespace.
func (s *suite) enrollVM(t *testing.T, v crds.Variant, vm, deploy string, driverInfo map[string]any) *node {
	t.Helper()
	n := s.newNode(t, v, vm)
	info := map[string]any{
		"redfish_address":   n.rec.URL(),
		"redfish_system_id": "/redfish/v1/Systems/" + n.key.ID(),
		"redfish_username":  n.env.User,
		"redfish_password":  n.env.Password,
		"redfish_verify_ca": false,
		// Basic: with "auto" (sessions) the nodes of one bridge share one
		// cached sushy session, and concurrent nodes on it stalled Ironic
		// 21.4's conductor for ~55 s now and then (sessions are covered
		// by the sushy e2e).
		"redfish_auth_type": "basic",
	}
	for k, val := range driverInfo {
		info[k] = val
	}
	n.create(t, map[string]any{
		"name":              fmt.Sprintf("%s-%s", v, n.key.Name),
		"driver":            "redfish",
		"driver_info":       info,
		"boot_interface":    "redfish-virtual-media",
		"deploy_interface":  deploy,
		"inspect_interface": "redfish",
		"network_interface": "noop",
	})
	return n
}

// newNode is the node of the VM named vm in the demo namespace of
// variant v, not enrolled yet.
func (s *suite) newNode(t *testing.T, v crds.Variant, vm string) *node {
	t.Helper()
	env := s.envs[v]
	dyn, err := dynamic.NewForConfig(env.Cluster.Admin)
	if err != nil {
		t.Fatalf("admin dynamic client: %v", err)
	}
	kube, err := kubernetes.NewForConfig(env.Cluster.Admin)
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	return &node{s: s, variant: v, env: env, rec: s.recs[v], forces: s.forces[v], dyn: dyn, kube: kube,
		key: system.Key{Namespace: demo.VMNamespace, Name: vm}}
}

// create enrolls the node (body is Ironic's node), checks it is in
// enroll, and arranges for its diagnostics to be printed if the test
// fails.
func (n *node) create(t *testing.T, body map[string]any) {
	t.Helper()
	n.step(t, "enroll", func() {
		created, err := n.s.api.CreateNode(t.Context(), body)
		if err != nil {
			t.Fatalf("enroll %s: %v", n.key, err)
		}
		n.uuid = created.UUID
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("diagnostics of node %s (%s):\n%s", n.uuid, n.key, n.diagnostics())
			}
		})
		if created.ProvisionState != "enroll" {
			t.Fatalf("new node: %s, want provision state enroll", created.Summary())
		}
	})
}

// step runs f, logging its duration as a TIMING line.
func (n *node) step(t *testing.T, name string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	t.Logf("TIMING ironic %s %s %s %s: %s", n.s.release.Name, n.variant, n.key.Name, name, time.Since(start).Round(time.Millisecond))
}

// diagnostics is what a failing step prints: the node as Ironic has it,
// the conductor's log lines about it and the bridge's exchanges for it.
func (n *node) diagnostics() string {
	var b strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := n.s.api.Node(ctx, n.uuid); err != nil {
		fmt.Fprintf(&b, "read node: %v\n", err)
	} else {
		fmt.Fprintf(&b, "ironic node: %s\n", got.Summary())
	}
	fmt.Fprintf(&b, "--- conductor log (last lines naming the node):\n%s\n", n.s.conductorLog(n.uuid, 40))
	if vm, err := n.dyn.Resource(kubevirt.VirtualMachines).Namespace(n.key.Namespace).Get(ctx, n.key.Name, metav1.GetOptions{}); err == nil {
		rs, _, _ := unstructured.NestedString(vm.Object, "spec", "runStrategy")
		fmt.Fprintf(&b, "VM runStrategy %q annotations %v\n", rs, vm.GetAnnotations())
	}
	if vmi, err := n.dyn.Resource(kubevirt.VirtualMachineInstances).Namespace(n.key.Namespace).Get(ctx, n.key.Name, metav1.GetOptions{}); err == nil {
		fmt.Fprintf(&b, "VMI %s phase %q created %s\n", vmi.GetUID(), vmcheck.Phase(vmi), vmi.GetCreationTimestamp())
	}
	fmt.Fprintf(&b, "--- bridge writes for %s:\n%s\n", n.key.ID(), n.rec.writesFor(n.key.ID()))
	fmt.Fprintf(&b, "--- bridge exchanges for %s (last 40):\n%s\n", n.key.ID(), n.rec.forSystem(n.key.ID(), 40))
	return b.String()
}

// get reads the node.
func (n *node) get(t *testing.T) ironicproc.Node {
	t.Helper()
	got, err := n.s.api.Node(t.Context(), n.uuid)
	if err != nil {
		t.Fatalf("read node %s: %v", n.key, err)
	}
	return got
}

// wait polls the node until done, failing after stepTimeout.
func (n *node) wait(t *testing.T, what string, done func(ironicproc.Node) bool) ironicproc.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), stepTimeout)
	defer cancel()
	got, err := n.s.api.WaitNode(ctx, n.uuid, done)
	if err != nil {
		t.Fatalf("%s: node %s: %v", what, n.key, err)
	}
	return got
}

// provision asks for target and waits until the node settles in want
// (stable, no error unless wantError).
func (n *node) provision(t *testing.T, target, want string, extra map[string]any) ironicproc.Node {
	t.Helper()
	if err := n.s.api.Provision(t.Context(), n.uuid, target, extra); err != nil {
		t.Fatalf("provision %s -> %s: %v", n.key, target, err)
	}
	return n.settle(t, "provision "+target, want)
}

// settle waits until the node is stable in provision state want; a
// *failed state other than want fails at once. A failed state keeps its
// target (clean failed -> manageable): it counts as settled anyway.
func (n *node) settle(t *testing.T, what, want string) ironicproc.Node {
	t.Helper()
	got := n.wait(t, what+" -> "+want, func(x ironicproc.Node) bool {
		failed := strings.HasSuffix(x.ProvisionState, "failed")
		return str(x.Reservation) == "" && str(x.TargetPowerState) == "" &&
			(failed || (x.ProvisionState == want && str(x.TargetProvisionState) == ""))
	})
	if got.ProvisionState != want {
		t.Fatalf("%s: %s, want provision state %s", what, got.Summary(), want)
	}
	return got
}

// power asks for target and waits until Ironic's power state is want.
func (n *node) power(t *testing.T, target, want string) ironicproc.Node {
	t.Helper()
	if err := n.s.api.Power(t.Context(), n.uuid, target); err != nil {
		t.Fatalf("power %s %s: %v", n.key, target, err)
	}
	got := n.wait(t, target, func(x ironicproc.Node) bool { return x.Stable() })
	if ironicproc.Str(got.PowerState) != want || ironicproc.Str(got.LastError) != "" {
		t.Fatalf("%s: %s, want power state %q and no error", target, got.Summary(), want)
	}
	return got
}

// vm reads the VirtualMachine.
func (n *node) vm(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return vmcheck.MustVM(t, n.dyn, n.key)
}

// vmi reads the VMI, nil when there is none.
func (n *node) vmi(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return vmcheck.MustVMI(t, n.dyn, n.key)
}

// waitVMI polls the VMI until ok says so (vmi may be nil), failing after
// stepTimeout; it returns the VMI ok accepted.
func (n *node) waitVMI(t *testing.T, what string, ok func(vmi *unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		vmi := n.vmi(t)
		if ok(vmi) {
			return vmi
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out after %s; VMI phase %q", what, stepTimeout, vmcheck.Phase(vmi))
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%s: %v", what, t.Context().Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// running is true for a live Running VMI.
func running(vmi *unstructured.Unstructured) bool {
	return vmi != nil && vmi.GetDeletionTimestamp() == nil && vmcheck.Phase(vmi) == "Running"
}

// bootOverride decodes the VM's boot annotation.
func (n *node) bootOverride(t *testing.T) system.BootOverride {
	t.Helper()
	var o system.BootOverride
	raw := n.vm(t).GetAnnotations()[apply.AnnotationBoot]
	if raw == "" {
		return o
	}
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		t.Fatalf("%s boot annotation %q: %v", n.key, raw, err)
	}
	return o
}

// checkFields runs `fields --check` on the VM.
func (n *node) checkFields(t *testing.T) {
	t.Helper()
	vmcheck.CheckFields(t, n.dyn, n.key)
}
