package sim_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// logLevel of the simulator in tests; SIM_DEBUG=1 shows everything.
var logLevel = func() slog.Level {
	if os.Getenv("SIM_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}()

// env is a test cluster with a running simulator.
type env struct {
	sim  *sim.Simulator
	dyn  dynamic.Interface
	kube kubernetes.Interface
	ns   string
}

// start runs a cluster with the given CRD variant and KubeVirt's
// virt-controller, and a simulator (the node side) watching one namespace.
func start(t *testing.T, v crds.Variant, opts sim.Options) *env {
	t.Helper()
	return startOn(t, testcluster.ForTestWith(t, testcluster.Options{Variant: v, VirtController: true}), opts)
}

// startOn runs a simulator (the node side) on cluster c, which runs
// virt-controller, watching one namespace.
func startOn(t *testing.T, c *testcluster.Cluster, opts sim.Options) *env {
	t.Helper()
	const ns = "sim-test"
	if err := c.CreateNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	opts.Namespaces = []string{ns}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: logLevel}))
	}
	s := sim.RunForTest(t, c.VirtHandler, opts)
	cfg := rest.CopyConfig(c.Admin)
	cfg.QPS, cfg.Burst = 200, 400
	return &env{
		sim:  s,
		dyn:  dynamic.NewForConfigOrDie(cfg),
		kube: kubernetes.NewForConfigOrDie(cfg),
		ns:   ns,
	}
}

// newVM is a minimal valid VM: a containerDisk root disk, 1Gi of memory,
// one masquerade interface on the pod network.
func newVM(ns, name, runStrategy string) *unstructured.Unstructured {
	return testutil.VM(ns, name, runStrategy)
}

func (e *env) createVM(t *testing.T, vm *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := e.dyn.Resource(sim.VMResource).Namespace(e.ns).Create(t.Context(), vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VM %s: %v", vm.GetName(), err)
	}
	return out
}

// patchVM merge-patches the VM's spec and returns the VM it wrote.
func (e *env) patchVM(t *testing.T, name, patch string) *unstructured.Unstructured {
	t.Helper()
	vm, err := e.dyn.Resource(sim.VMResource).Namespace(e.ns).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch VM %s with %s: %v", name, patch, err)
	}
	return vm
}

// patchVMStatus merge-patches the VM's status subresource.
func (e *env) patchVMStatus(t *testing.T, name, patch string) {
	t.Helper()
	_, err := e.dyn.Resource(sim.VMResource).Namespace(e.ns).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("patch VM %s status with %s: %v", name, patch, err)
	}
}

func (e *env) getVM(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	return e.dyn.Resource(sim.VMResource).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
}

func (e *env) getVMI(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	return e.dyn.Resource(sim.VMIResource).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
}

const timeout = 60 * time.Second

// eventually polls cond until it returns nil, failing the test with the
// last error after the timeout.
func eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	testutil.Eventually(t, what, timeout, 20*time.Millisecond, cond)
}

func str(obj *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedString(obj.Object, path...)
	return v
}

// vmIs waits until the VM's printableStatus is want. (Not that its
// observedGeneration reached the VM's generation: virt-controller records
// the generation the running VMI was started from, and its own writes to
// the VM's spec (domain.resources, firmware.uuid) come after that.)
func (e *env) vmIs(t *testing.T, name, want string) *unstructured.Unstructured {
	t.Helper()
	var vm *unstructured.Unstructured
	eventually(t, fmt.Sprintf("VM %s %s", name, want), func(ctx context.Context) error {
		var err error
		if vm, err = e.getVM(ctx, name); err != nil {
			return err
		}
		if got := str(vm, "status", "printableStatus"); got != want {
			return fmt.Errorf("printableStatus %q", got)
		}
		return nil
	})
	return vm
}

// vmiIs waits until the VMI exists in phase want (and, if notUID is set,
// has another UID).
func (e *env) vmiIs(t *testing.T, name, want string, notUID types.UID) *unstructured.Unstructured {
	t.Helper()
	var vmi *unstructured.Unstructured
	eventually(t, fmt.Sprintf("VMI %s %s", name, want), func(ctx context.Context) error {
		var err error
		if vmi, err = e.getVMI(ctx, name); err != nil {
			return err
		}
		if vmi.GetUID() == notUID {
			return fmt.Errorf("still the old VMI %s", notUID)
		}
		if got := str(vmi, "status", "phase"); got != want {
			return fmt.Errorf("phase %q", got)
		}
		return nil
	})
	return vmi
}

// vmiGone waits until the VMI does not exist.
func (e *env) vmiGone(t *testing.T, name string) {
	t.Helper()
	eventually(t, "VMI "+name+" gone", func(ctx context.Context) error {
		vmi, err := e.getVMI(ctx, name)
		if err == nil {
			return fmt.Errorf("VMI %s still there, phase %q", vmi.GetUID(), str(vmi, "status", "phase"))
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	})
}
