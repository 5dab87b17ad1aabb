package e2e

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/redfish"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// TestGofish walks the whole Redfish tree with the gofish Go client,
// checks the values Ironic's inspection relies on against the VM in the
// cluster, then uses gofish to insert media, set a Cd/Once override and
// power the system on.
func TestGofish(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		start := time.Now()
		c, err := gofish.ConnectContext(t.Context(), gofish.ClientConfig{
			Endpoint: env.URL, Username: env.User, Password: env.Password, Insecure: true,
		})
		if err != nil {
			t.Fatalf("gofish connect: %v", err)
		}
		t.Cleanup(c.Logout)
		root := c.GetService()
		if root.UUID != "8f0e8d44-5a38-4c55-9a0a-6d6f2c1d2b01" || root.RedfishVersion == "" {
			t.Errorf("service root UUID %q RedfishVersion %q", root.UUID, root.RedfishVersion)
		}
		for _, bad := range []string{"dell", "supermicro", "ami", "asrockrack", "redfish_compatible"} {
			if strings.Contains(strings.ToLower(root.Vendor), bad) {
				t.Errorf("service root Vendor %q contains %q (Ironic switches behaviour on it)", root.Vendor, bad)
			}
		}

		systems, err := root.Systems()
		if err != nil {
			t.Fatalf("systems: %v", err)
		}
		var ids []string
		var sys *redfish.ComputerSystem
		for _, s := range systems {
			ids = append(ids, s.ID)
			if s.ID == sysID(vmGofish) {
				sys = s
			}
		}
		if len(ids) != numVMs || sys == nil {
			t.Fatalf("systems %v: want %d, including %s", ids, numVMs, sysID(vmGofish))
		}
		vm := a.vm(t.Context(), t, vmGofish)
		checkSystem(t, c, sys, vm)

		managers, err := root.Managers()
		if err != nil {
			t.Fatalf("managers: %v", err)
		}
		var cd *redfish.VirtualMedia
		for _, m := range managers {
			if m.ID != sysID(vmGofish) {
				continue
			}
			if m.ManagerType != redfish.BMCManagerType {
				t.Errorf("manager %s type %q, want BMC", m.ID, m.ManagerType)
			}
			media, err := m.VirtualMedia()
			if err != nil {
				t.Fatalf("manager %s virtual media: %v", m.ID, err)
			}
			for _, v := range media {
				if v.ID == "cd0" {
					cd = v
				}
			}
		}
		if len(managers) != numVMs || cd == nil {
			t.Fatalf("%d managers, cd0 of %s found: %v", len(managers), sysID(vmGofish), cd != nil)
		}
		if !slices.Contains(cd.MediaTypes, redfish.CDMediaType) || cd.Inserted || !cd.SupportsMediaInsert {
			t.Errorf("cd0 before insert: MediaTypes %v Inserted %v SupportsMediaInsert %v", cd.MediaTypes, cd.Inserted, cd.SupportsMediaInsert)
		}

		chassis, err := root.Chassis()
		if err != nil || len(chassis) == 0 {
			t.Errorf("chassis: %d, %v", len(chassis), err)
		}
		if _, err := root.SessionService(); err != nil {
			t.Errorf("session service: %v", err)
		}
		if sessions, err := root.Sessions(); err != nil || len(sessions) == 0 {
			t.Errorf("sessions (gofish logged in with one): %d, %v", len(sessions), err)
		}
		if as, err := root.AccountService(); err != nil {
			t.Errorf("account service: %v", err)
		} else if _, err := as.Accounts(); err != nil {
			t.Errorf("accounts: %v", err)
		}
		if ts, err := root.TaskService(); err != nil {
			t.Errorf("task service: %v", err)
		} else if _, err := ts.Tasks(); err != nil {
			t.Errorf("tasks: %v", err)
		}
		t.Logf("TIMING gofish tree walk: %s", time.Since(start).Round(time.Millisecond))

		start = time.Now()
		before := rawResource(t, c, sys.ODataID)
		image := imageURL(env, "deploy.iso")
		if err := cd.InsertMedia(image, true, true); err != nil {
			t.Fatalf("gofish InsertMedia: %v", err)
		}
		// Inserted from the moment the insert is accepted (the import may still run).
		waitFor(t, "cd0 Inserted over gofish", func() (bool, string) {
			v, err := redfish.GetVirtualMedia(c, cd.ODataID)
			if err != nil {
				return false, err.Error()
			}
			return v.Inserted, "Inserted false"
		})
		t.Logf("TIMING gofish InsertMedia until Inserted (accepted): %s", time.Since(start).Round(time.Millisecond))
		after := rawResource(t, c, sys.ODataID)
		t.Run("system ETag follows its body", func(t *testing.T) { checkETag(t, before, after) })
		// gofish sends If-Match with the ETag of the object it holds: re-read.
		if sys, err = redfish.GetComputerSystem(c, sys.ODataID); err != nil {
			t.Fatalf("get system: %v", err)
		}
		if err := sys.SetBoot(redfish.Boot{
			BootSourceOverrideTarget:  redfish.CdBootSourceOverrideTarget,
			BootSourceOverrideEnabled: redfish.OnceBootSourceOverrideEnabled,
		}); err != nil {
			t.Fatalf("gofish SetBoot Cd/Once: %v", err)
		}
		if err := sys.Reset(redfish.OnResetType); err != nil {
			t.Fatalf("gofish Reset On: %v", err)
		}
		vmi := a.waitRunning(t, vmGofish)
		t.Logf("TIMING gofish insert + Cd/Once + On until VMI Running: %s", time.Since(start).Round(time.Millisecond))
		spec := vmiSpec(t, vmi)
		if ds := disks(t, spec); len(ds) == 0 || ds[0].Name != mediaDisk() {
			t.Errorf("VMI disks by boot order %+v: want %s first", ds, mediaDisk())
		}
		if got := volumes(t, spec)[mediaDisk()]; got != claimOf(vmGofish) {
			t.Errorf("VMI volume %s claim %q, want %q", mediaDisk(), got, claimOf(vmGofish))
		}
		if got, want := fileSHA256(t, env.Sim.ImagePath(demo.VMNamespace, claimOf(vmGofish))), env.Images.SHA256["deploy.iso"]; got != want {
			t.Errorf("imported image sha256 %s, want %s (deploy.iso)", got, want)
		}
		got, err := redfish.GetVirtualMedia(c, cd.ODataID)
		if err != nil {
			t.Fatalf("get cd0: %v", err)
		}
		if got.Image != image || !got.Inserted {
			t.Errorf("cd0 after insert and boot: Image %q Inserted %v", got.Image, got.Inserted)
		}
		waitFor(t, "PowerState On over gofish", func() (bool, string) {
			s, err := redfish.GetComputerSystem(c, sys.ODataID)
			if err != nil {
				return false, err.Error()
			}
			return s.PowerState == redfish.OnPowerState, string(s.PowerState)
		})
		t.Run("guest reboot boots the disk", func(t *testing.T) { checkGuestReboot(t, env, a, c, sys.ODataID, vmGofish) })
	})
}

// rawResource GETs uri and returns its ETag header and its body without
// @odata.etag.
type rawDoc struct {
	ETag string
	Body map[string]any
}

func rawResource(t *testing.T, c *gofish.APIClient, uri string) rawDoc {
	t.Helper()
	resp, err := c.Get(uri)
	if err != nil {
		t.Fatalf("GET %s: %v", uri, err)
	}
	defer resp.Body.Close()
	var d rawDoc
	if err := json.NewDecoder(resp.Body).Decode(&d.Body); err != nil {
		t.Fatalf("GET %s: decode: %v", uri, err)
	}
	delete(d.Body, "@odata.etag")
	d.ETag = resp.Header.Get("ETag")
	return d
}

// checkETag: a resource's ETag must change when its body changes, and must
// not change when it does not (a spurious change makes a client's
// If-Match PATCH fail with 412).
func checkETag(t *testing.T, before, after rawDoc) {
	t.Helper()
	diff := cmp.Diff(before.Body, after.Body)
	switch {
	case diff != "" && before.ETag == after.ETag:
		t.Errorf("system body changed but ETag %s did not:\n%s", before.ETag, diff)
	case diff == "" && before.ETag != after.ETag:
		t.Errorf("system body unchanged but ETag moved %s -> %s: a client's If-Match PATCH would get 412", before.ETag, after.ETag)
	}
}

// checkSystem compares what gofish reads about one system with its VM.
func checkSystem(t *testing.T, c *gofish.APIClient, sys *redfish.ComputerSystem, vm *unstructured.Unstructured) {
	t.Helper()
	tmpl := templateSpec(t, vm)
	uuid, _, _ := unstructured.NestedString(tmpl, "domain", "firmware", "uuid")
	if uuid == "" || sys.UUID != uuid {
		t.Errorf("system UUID %q, VM firmware UUID %q", sys.UUID, uuid)
	}
	if sys.MemorySummary.TotalSystemMemoryGiB != 4 {
		t.Errorf("TotalSystemMemoryGiB %v, want 4 (guest 4Gi)", sys.MemorySummary.TotalSystemMemoryGiB)
	}
	if sys.PowerState != redfish.OffPowerState {
		t.Errorf("PowerState %q of a Halted VM, want Off", sys.PowerState)
	}
	if !slices.Contains(sys.SupportedResetTypes, redfish.ForceOffResetType) {
		t.Errorf("SupportedResetTypes %v lack ForceOff", sys.SupportedResetTypes)
	}

	procs, err := sys.Processors()
	if err != nil || len(procs) == 0 {
		t.Fatalf("processors: %d, %v", len(procs), err)
	}
	threads := 0
	for _, p := range procs {
		threads += p.TotalThreads
		if p.InstructionSet != redfish.X8664InstructionSet {
			t.Errorf("processor %s InstructionSet %q, want x86-64", p.ID, p.InstructionSet)
		}
	}
	if threads != 2 { // 1 socket x 2 cores x 1 thread
		t.Errorf("%d threads over %d processors, want 2", threads, len(procs))
	}

	nics, err := sys.EthernetInterfaces()
	if err != nil {
		t.Fatalf("ethernet interfaces: %v", err)
	}
	var macs, wantMACs []string
	for _, n := range nics {
		macs = append(macs, strings.ToLower(n.MACAddress))
	}
	ifaces, _, _ := unstructured.NestedSlice(tmpl, "domain", "devices", "interfaces")
	for _, i := range ifaces {
		mac, _, _ := unstructured.NestedString(i.(map[string]any), "macAddress")
		wantMACs = append(wantMACs, strings.ToLower(mac))
	}
	if diff := cmp.Diff(wantMACs, macs); diff != "" || len(macs) == 0 {
		t.Errorf("EthernetInterfaces MACs (-VM +Redfish):\n%s", diff)
	}

	simple, err := sys.SimpleStorages()
	if err != nil {
		t.Fatalf("simple storage: %v", err)
	}
	var capacity int64
	for _, s := range simple {
		for _, d := range s.Devices {
			capacity = max(capacity, d.CapacityBytes)
		}
	}
	if capacity < 4<<30 {
		t.Errorf("largest SimpleStorage device %d bytes, want a root disk >= 4 GiB", capacity)
	}
	storage, err := sys.Storage()
	if err != nil || len(storage) == 0 {
		t.Fatalf("storage: %d, %v", len(storage), err)
	}
	if drives, err := storage[0].Drives(); err != nil || len(drives) == 0 {
		t.Errorf("drives: %d, %v", len(drives), err)
	}
	if _, err := sys.Bios(); err != nil {
		t.Errorf("bios: %v", err)
	}
	sb, err := sys.SecureBoot()
	if err != nil {
		t.Fatalf("secure boot: %v", err)
	}
	if sb.SecureBootEnable {
		t.Errorf("SecureBootEnable true, VM has efi.secureBoot false")
	}
	if managedBy, err := sys.ManagedBy(); err != nil || len(managedBy) != 1 || managedBy[0].ID != sys.ID {
		t.Errorf("ManagedBy: %v (%v), want manager %s", len(managedBy), err, sys.ID)
	}
	if media, err := sys.VirtualMedia(); err != nil || len(media) == 0 {
		t.Errorf("system virtual media: %d, %v", len(media), err)
	}
}

// vmSecureBoot is the sample VM TestGofishSecureBoot uses (no other test
// touches it).
const vmSecureBoot = 9

// TestGofishSecureBoot turns Secure Boot on and then off with gofish, the
// way sushy does it (PATCH SecureBoot {"SecureBootEnable": ...}), and checks
// the VM's firmware and SMM fields and that redfish-boot owns them.
func TestGofishSecureBoot(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		c, err := gofish.ConnectContext(t.Context(), gofish.ClientConfig{
			Endpoint: env.URL, Username: env.User, Password: env.Password, Insecure: true,
		})
		if err != nil {
			t.Fatalf("gofish connect: %v", err)
		}
		t.Cleanup(c.Logout)
		uri := "/redfish/v1/Systems/" + sysID(vmSecureBoot)
		domain := []string{"spec", "template", "spec", "domain"}
		secureBootPath := append(slices.Clone(domain), "firmware", "bootloader", "efi", "secureBoot")
		smmPath := append(slices.Clone(domain), "features", "smm", "enabled")
		fieldPath := func(p []string) string { return "." + strings.Join(p, ".") }
		for _, step := range []struct {
			enable    bool
			wantSMM   string // "-" for absent
			wantOwned []string
		}{
			{true, "true", []string{fieldPath(smmPath), fieldPath(secureBootPath)}},
			{false, "-", []string{fieldPath(secureBootPath)}},
		} {
			sys, err := redfish.GetComputerSystem(c, uri)
			if err != nil {
				t.Fatalf("get system: %v", err)
			}
			sb, err := sys.SecureBoot()
			if err != nil {
				t.Fatalf("secure boot: %v", err)
			}
			sb.SecureBootEnable = step.enable
			if err := sb.Update(); err != nil {
				t.Fatalf("gofish SecureBootEnable %v: %v", step.enable, err)
			}
			// The backend answers once its cache holds the write: read back.
			if sb, err = redfish.GetSecureBoot(c, sb.ODataID); err != nil || sb.SecureBootEnable != step.enable {
				t.Errorf("SecureBootEnable after PATCH %v: %v (%v)", step.enable, sb.SecureBootEnable, err)
			}
			vm := a.vm(t.Context(), t, vmSecureBoot)
			got, _, _ := unstructured.NestedBool(vm.Object, secureBootPath...)
			if got != step.enable {
				t.Errorf("SecureBootEnable %v: VM efi.secureBoot %v", step.enable, got)
			}
			smm := "-"
			if v, ok, _ := unstructured.NestedBool(vm.Object, smmPath...); ok {
				smm = strconv.FormatBool(v)
			}
			if smm != step.wantSMM {
				t.Errorf("SecureBootEnable %v: VM features.smm.enabled %s, want %s", step.enable, smm, step.wantSMM)
			}
			owned, err := apply.Owned(vm)
			if err != nil {
				t.Fatal(err)
			}
			var firmware []string
			for _, p := range apply.Paths(owned[apply.ManagerBoot]) {
				if !strings.HasPrefix(p, ".metadata.") {
					firmware = append(firmware, p)
				}
			}
			if diff := cmp.Diff(step.wantOwned, firmware); diff != "" {
				t.Errorf("SecureBootEnable %v: %s spec fields (-want +got):\n%s", step.enable, apply.ManagerBoot, diff)
			}
		}
	})
}
