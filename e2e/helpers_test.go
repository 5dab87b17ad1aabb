package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// waitTimeout bounds every wait for the cluster to settle.
const waitTimeout = 60 * time.Second

// clientBound bounds one run of a client process (sushy, redfishtool,
// ipmitool): a bound on failure, never a wait. A client that hangs fails
// its test, naming the command, instead of running into go test's
// -timeout, whose goroutine dump names no command.
const clientBound = 5 * time.Minute

// clientContext is t's context bounded by clientBound.
func clientContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), clientBound)
	t.Cleanup(cancel)
	return ctx
}

// clientCommand is exec.CommandContext under [clientContext].
func clientCommand(t *testing.T, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(clientContext(t), name, args...)
}

// admin holds the cluster-admin clients of one env, and node the
// dynamic client of virt-handler's identity (virt-api reverts VMI status
// written by anyone else).
type admin struct {
	dyn  dynamic.Interface
	kube kubernetes.Interface
	node dynamic.Interface
}

func adminFor(t *testing.T, env *demo.Env) admin {
	t.Helper()
	dyn, err := dynamic.NewForConfig(env.Cluster.Admin)
	if err != nil {
		t.Fatalf("admin dynamic client: %v", err)
	}
	kube, err := kubernetes.NewForConfig(env.Cluster.Admin)
	if err != nil {
		t.Fatalf("admin kubernetes client: %v", err)
	}
	node, err := dynamic.NewForConfig(env.Cluster.VirtHandler)
	if err != nil {
		t.Fatalf("virt-handler dynamic client: %v", err)
	}
	return admin{dyn: dyn, kube: kube, node: node}
}

// vmName is the name of sample VM i; keyOf its key; sysID its Redfish id.
func vmName(i int) string                        { return fmt.Sprintf("vm-%d", i) }
func keyOf(i int) system.Key                     { return system.Key{Namespace: demo.VMNamespace, Name: vmName(i)} }
func sysID(i int) string                         { return keyOf(i).ID() }
func claimOf(i int) string                       { return media.ClaimName(keyOf(i), media.DefaultSlot) }
func jsonUnmarshal(raw string, v any) error      { return json.Unmarshal([]byte(raw), v) }
func mediaDisk() string                          { return apply.DiskName(media.DefaultSlot) }
func imageURL(env *demo.Env, name string) string { return env.Images.URL + "/images/" + name }

func (a admin) vm(ctx context.Context, t *testing.T, i int) *unstructured.Unstructured {
	t.Helper()
	vm, err := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(demo.VMNamespace).Get(ctx, vmName(i), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get VM %s: %v", vmName(i), err)
	}
	return vm
}

// vmi returns the VMI of VM i, nil if there is none.
func (a admin) vmi(ctx context.Context, t *testing.T, i int) *unstructured.Unstructured {
	t.Helper()
	return a.vmiOf(ctx, t, keyOf(i))
}

// vmiOf returns the VMI of VM key, nil if there is none.
func (a admin) vmiOf(ctx context.Context, t *testing.T, key system.Key) *unstructured.Unstructured {
	t.Helper()
	vmi, err := a.dyn.Resource(kubevirt.VirtualMachineInstances).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get VMI %s: %v", key, err)
	}
	return vmi
}

// slot decodes the media annotation of the VM's cd0 slot (zero if none).
func slot(t *testing.T, vm *unstructured.Unstructured) system.MediaSlot {
	t.Helper()
	return vmcheck.MustSlot(t, vm, media.DefaultSlot)
}

func phase(obj *unstructured.Unstructured) string { return vmcheck.Phase(obj) }

// waitFor polls cond every 200 ms until it returns true or waitTimeout
// passes; then it fails with what cond last reported.
func waitFor(t *testing.T, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	return testutil.Eventually(t, what, waitTimeout, 200*time.Millisecond, testutil.Holds(cond))
}

// waitRunning waits until VM i has a Running VMI and returns it.
func (a admin) waitRunning(t *testing.T, i int) *unstructured.Unstructured {
	t.Helper()
	var vmi *unstructured.Unstructured
	waitFor(t, vmName(i)+" VMI Running", func() (bool, string) {
		vmi = a.vmi(t.Context(), t, i)
		return phase(vmi) == "Running" && vmi.GetDeletionTimestamp() == nil, "phase " + phase(vmi)
	})
	return vmi
}

// bootDisk is one disk of a VM or VMI spec as the firmware sees it.
type bootDisk = vmcheck.Disk

// disks returns the disks of a VM template spec or a VMI spec in the order
// the firmware tries them (vmcheck.Disks).
func disks(t *testing.T, spec map[string]any) []bootDisk {
	t.Helper()
	return vmcheck.Disks(spec)
}

// volumes maps volume name to its PVC claim name ("" for non-PVC volumes).
func volumes(t *testing.T, spec map[string]any) map[string]string {
	t.Helper()
	return vmcheck.Volumes(spec)
}

var templateSpec = vmcheck.MustTemplateSpec

func vmiSpec(t *testing.T, vmi *unstructured.Unstructured) map[string]any {
	t.Helper()
	spec, _, err := unstructured.NestedMap(vmi.Object, "spec")
	if err != nil {
		t.Fatalf("VMI %s spec: %v", vmi.GetName(), err)
	}
	return spec
}

var fileSHA256 = vmcheck.MustFileSHA256

// mediaObjects lists the names of VM i's import pods and media PVCs.
func (a admin) mediaObjects(ctx context.Context, t *testing.T, i int) []string {
	t.Helper()
	out, err := vmcheck.MediaObjects(ctx, a.kube, keyOf(i), media.DefaultSlot)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rootAndEmptyDrives reports whether ds and vols hold the root disk and
// nothing else but empty CD-ROM drives of CD slots (media-<slot> without
// a volume): what a deployed VM keeps after its eject (apply's empty
// drive, ready for the next insert to go in hot).
func rootAndEmptyDrives(ds []bootDisk, vols map[string]string) bool {
	root := false
	for _, d := range ds {
		if d.Name == "rootdisk" {
			root = true
			continue
		}
		if !vmcheck.EmptyDrive(d, vols) {
			return false
		}
	}
	_, rootVol := vols["rootdisk"]
	return root && rootVol && len(vols) == 1
}
