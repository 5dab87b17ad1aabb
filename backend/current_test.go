package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// TestCurrentFollowsVMI: on a real apiserver, both CRD variants, the
// firmware a Redfish client sees as current (SecureBootCurrentBoot, the
// Bios attributes) is what the VMI booted, read from the inventory's
// trimmed VMI, while the pending one (SecureBootEnable, Bios/Settings) is
// the VM spec: Secure Boot enabled on a VM whose VMI runs without it reads
// Disabled as current and Enabled as pending until a VMI booted with it
// runs; with no VMI SecureBootCurrentBoot is null.
func TestCurrentFollowsVMI(t *testing.T) {
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			testCurrentFollowsVMI(t, v)
		})
	}
}

func testCurrentFollowsVMI(t *testing.T, v crds.Variant) {
	ctx := t.Context()
	s := newStack(t, v, nil)
	vmis := s.admin.Resource(kubevirt.VirtualMachineInstances).Namespace(stackNS)
	type seen struct {
		Current        any
		Enable         any
		Bios, Settings any
	}
	look := func() seen {
		get := func(path string) map[string]any {
			rec := s.do(t, http.MethodGet, s.uri+path, "", "")
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
			}
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			return body
		}
		sb := get("/SecureBoot")
		return seen{Current: sb["SecureBootCurrentBoot"], Enable: sb["SecureBootEnable"],
			Bios: get("/Bios")["Attributes"], Settings: get("/Bios/Settings")["Attributes"]}
	}
	expect := func(what string, want seen) {
		t.Helper()
		testutil.Eventually(t, what, 30*time.Second, 10*time.Millisecond, func(context.Context) error {
			if diff := cmp.Diff(want, look()); diff != "" {
				return fmt.Errorf("(-want +got):\n%s", diff)
			}
			return nil
		})
	}
	attrs := func(mode, secure string) map[string]any {
		return map[string]any{"BootMode": mode, "SecureBoot": secure}
	}
	runVMI := func(secureBoot bool) {
		t.Helper()
		vmi := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
			"metadata": map[string]any{"name": s.key.Name, "namespace": stackNS},
			"spec": map[string]any{"domain": map[string]any{
				"devices":  map[string]any{},
				"firmware": map[string]any{"bootloader": map[string]any{"efi": map[string]any{"secureBoot": secureBoot}}},
			}},
			"status": map[string]any{"phase": "Running"},
		}}
		if _, err := vmis.Create(ctx, vmi, metav1.CreateOptions{FieldManager: "virt-controller"}); err != nil {
			t.Fatal(err)
		}
	}

	expect("off: nothing booted, nothing pending", seen{Current: nil, Enable: false, Bios: attrs("Uefi", "Disabled"), Settings: attrs("Uefi", "Disabled")})
	runVMI(false)
	expect("running without Secure Boot", seen{Current: "Disabled", Enable: false, Bios: attrs("Uefi", "Disabled"), Settings: attrs("Uefi", "Disabled")})

	if rec := s.do(t, http.MethodPatch, s.uri+"/SecureBoot", `{"SecureBootEnable":true}`, ""); rec.Code != http.StatusNoContent {
		t.Fatalf("enable Secure Boot: %d %s", rec.Code, rec.Body)
	}
	expect("Secure Boot enabled, the VMI still without", seen{Current: "Disabled", Enable: true, Bios: attrs("Uefi", "Disabled"), Settings: attrs("Uefi", "Enabled")})

	if err := vmis.Delete(ctx, s.key.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("VMI gone", seen{Current: nil, Enable: true, Bios: attrs("Uefi", "Enabled"), Settings: attrs("Uefi", "Enabled")})
	runVMI(true)
	expect("a VMI booted with Secure Boot", seen{Current: "Enabled", Enable: true, Bios: attrs("Uefi", "Enabled"), Settings: attrs("Uefi", "Enabled")})
}
