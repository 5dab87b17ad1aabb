package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// firmwareOp is one of the four firmware operations Ironic sends.
type firmwareOp struct {
	name, path, body string
}

var firmwareOps = []firmwareOp{
	{"UEFI", "", `{"Boot":{"BootSourceOverrideMode":"UEFI"}}`},
	{"Legacy", "", `{"Boot":{"BootSourceOverrideMode":"Legacy"}}`},
	{"SecureBoot on", "/SecureBoot", `{"SecureBootEnable":true}`},
	{"SecureBoot off", "/SecureBoot", `{"SecureBootEnable":false}`},
}

// firmwareState is a boot mode and Secure Boot, as Redfish reports it or as
// a VM spec boots it.
type firmwareState struct {
	Mode       system.BootMode
	SecureBoot bool
}

// expect is what op does from state s: the state after, and whether it is
// refused. Legacy is refused only while Secure Boot is on: an efi the VM's
// author wrote is removed by the bridge (a preconditioned patch).
func (s firmwareState) expect(op string) (firmwareState, bool) {
	switch op {
	case "UEFI":
		s.Mode = system.BootUEFI
	case "Legacy":
		if s.SecureBoot {
			return s, true
		}
		s.Mode = system.BootLegacy
	case "SecureBoot on":
		if s.Mode != system.BootUEFI {
			return s, true
		}
		s.SecureBoot = true
	case "SecureBoot off":
		s.SecureBoot = false
	}
	return s, false
}

// TestFirmwareEveryOrder walks every order of {UEFI, Legacy, SecureBoot on,
// SecureBoot off} (24 permutations, each operation sent twice in a row) on
// a VM without a bootloader and on one whose author wrote efi, through
// Redfish, on both CRD variants. After every step: what Redfish reports
// (BootSourceOverrideMode, SecureBootEnable, Bios attributes; and
// SecureBootCurrentBoot null: the VM never runs) is what the VM spec boots as KubeVirt reads it, the spec is
// one KubeVirt accepts, and a refused combination is a 400 saying what to do,
// never a 5xx.
func TestFirmwareEveryOrder(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		client := redfishClient()
		steps, refusals := 0, 0
		var created []string
		for _, authorEFI := range []bool{false, true} {
			for i, order := range permutations(len(firmwareOps)) {
				name := fmt.Sprintf("fw-%s-%d", map[bool]string{false: "bare", true: "efi"}[authorEFI], i)
				vm := demo.SampleVM(demo.VMNamespace, name)
				if !authorEFI {
					unstructured.RemoveNestedField(vm.Object, "spec", "template", "spec", "domain", "firmware", "bootloader")
				}
				vms := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(demo.VMNamespace)
				if _, err := vms.Create(t.Context(), vm, metav1.CreateOptions{FieldManager: "demo-author"}); err != nil {
					t.Fatalf("create %s: %v", name, err)
				}
				// The env is shared: other tests count its systems (deleted
				// below; this cleanup covers a failed walk).
				created = append(created, name)
				t.Cleanup(func() { _ = vms.Delete(context.Background(), name, metav1.DeleteOptions{}) })
				uri := "/redfish/v1/Systems/" + system.Key{Namespace: demo.VMNamespace, Name: name}.ID()
				waitFor(t, name+" served", func() (bool, string) {
					status, _ := call(t, client, env, http.MethodGet, uri, "")
					return status == http.StatusOK, fmt.Sprint(status)
				})
				state := firmwareState{Mode: system.BootLegacy}
				if authorEFI {
					state.Mode = system.BootUEFI
				}
				var done []string
				for _, k := range order {
					op := firmwareOps[k]
					for range 2 {
						done = append(done, op.name)
						what := name + ": " + strings.Join(done, ", ")
						var refused bool
						state, refused = state.expect(op.name)
						status, body := call(t, client, env, http.MethodPatch, uri+op.path, op.body)
						steps++
						switch {
						case refused && status == http.StatusBadRequest:
							refusals++
							checkRefusal(t, what, body)
						case refused || status != http.StatusNoContent:
							t.Fatalf("%s: status %d (want refused: %v): %s", what, status, refused, body)
						}
						live, err := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(demo.VMNamespace).Get(t.Context(), name, metav1.GetOptions{})
						if err != nil {
							t.Fatalf("get VM %s: %v", name, err)
						}
						spec := specFirmware(t, live)
						if spec != state {
							t.Errorf("%s: the VM boots %+v, want %+v", what, spec, state)
						}
						if got := reported(t, client, env, uri); got != spec {
							t.Fatalf("%s: Redfish reports %+v, the VM boots %+v", what, got, spec)
						}
					}
				}
			}
		}
		t.Logf("%d steps, %d refused with a 400, 0 answers of 5xx", steps, refusals)
		for _, name := range created {
			if err := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(demo.VMNamespace).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete %s: %v", name, err)
			}
		}
		waitFor(t, "the walk's systems gone", func() (bool, string) {
			_, body := call(t, client, env, http.MethodGet, "/redfish/v1/Systems", "")
			return !strings.Contains(string(body), ".fw-"), string(body)
		})
	})
}

// permutations returns every order of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// checkRefusal: a refused firmware change is a Redfish error whose message
// names the property and whose resolution says what to do.
func checkRefusal(t *testing.T, what string, body []byte) {
	t.Helper()
	var e struct {
		Error struct {
			Info []struct {
				MessageID  string `json:"MessageId"`
				Resolution string
				Related    []string `json:"RelatedProperties"`
			} `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || len(e.Error.Info) != 1 {
		t.Fatalf("%s: not one Redfish message (%v): %s", what, err, body)
	}
	m := e.Error.Info[0]
	if !strings.HasSuffix(m.MessageID, ".PropertyValueConflict") && !strings.HasSuffix(m.MessageID, ".PropertyValueIncorrect") {
		t.Errorf("%s: MessageId %s, want PropertyValueConflict or PropertyValueIncorrect", what, m.MessageID)
	}
	if !strings.Contains(m.Resolution, "UEFI") || len(m.Related) != 1 {
		t.Errorf("%s: resolution %q, related %v: want what to do and the property", what, m.Resolution, m.Related)
	}
}

// specFirmware is what KubeVirt boots from a VM spec (efi set: UEFI, Secure
// Boot unless efi.secureBoot is false; else BIOS), written here apart from
// the bridge's own reader. It fails on specs KubeVirt would not run.
func specFirmware(t *testing.T, vm *unstructured.Unstructured) firmwareState {
	t.Helper()
	domain := []string{"spec", "template", "spec", "domain"}
	efi, hasEFI, _ := unstructured.NestedMap(vm.Object, append(domain, "firmware", "bootloader", "efi")...)
	_, hasBIOS, _ := unstructured.NestedMap(vm.Object, append(domain, "firmware", "bootloader", "bios")...)
	smm, _, _ := unstructured.NestedBool(vm.Object, append(domain, "features", "smm", "enabled")...)
	if !hasEFI {
		return firmwareState{Mode: system.BootLegacy}
	}
	if hasBIOS {
		t.Errorf("VM %s has both efi and bios", vm.GetName())
	}
	sb, set := efi["secureBoot"].(bool)
	secure := !set || sb
	if secure && !smm {
		t.Errorf("VM %s: Secure Boot without features.smm.enabled (KubeVirt refuses it)", vm.GetName())
	}
	return firmwareState{Mode: system.BootUEFI, SecureBoot: secure}
}

// reported is the firmware Redfish reports for the system at uri; the
// System, SecureBoot and Bios resources must agree.
func reported(t *testing.T, client *http.Client, env *demo.Env, uri string) firmwareState {
	t.Helper()
	get := func(path string, v any) {
		status, body := call(t, client, env, http.MethodGet, uri+path, "")
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", uri+path, status, body)
		}
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v", uri+path, err)
		}
	}
	var sys struct {
		Boot struct{ BootSourceOverrideMode system.BootMode }
	}
	var sb struct {
		SecureBootEnable      bool
		SecureBootCurrentBoot string
	}
	var bios struct {
		Attributes struct{ BootMode, SecureBoot string }
	}
	get("", &sys)
	get("/SecureBoot", &sb)
	get("/Bios", &bios)
	got := firmwareState{Mode: sys.Boot.BootSourceOverrideMode, SecureBoot: sb.SecureBootEnable}
	wantBios := map[system.BootMode]string{system.BootUEFI: "Uefi", system.BootLegacy: "Bios"}[got.Mode]
	onOff := map[bool]string{true: "Enabled", false: "Disabled"}[got.SecureBoot]
	// The VM never runs: no boot is current (SecureBootCurrentBoot null),
	// and Bios shows the spec, nothing pending.
	if sb.SecureBootCurrentBoot != "" || bios.Attributes.BootMode != wantBios || bios.Attributes.SecureBoot != onOff {
		t.Errorf("%s: System says %+v, SecureBootCurrentBoot %q (want null: no VMI), Bios %+v", uri, got, sb.SecureBootCurrentBoot, bios.Attributes)
	}
	return got
}
