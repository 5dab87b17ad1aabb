package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// checkpointTask is the header ansible-playbook prints when a playbook's
// "checkpoint <name>" task starts: every task before it has finished.
var checkpointTask = regexp.MustCompile(`^TASK \[checkpoint ([a-z-]+)\]`)

// TestAnsible runs Ansible's community.general Redfish modules (Debian 12's
// ansible 7.7.0: community.general 6.6.2) through
// testdata/ansible_redfish.yml against one VM of each variant's demo, both
// variants at once: redfish_info of every category, redfish_command's
// virtual media through the System and through the Manager, one-time and
// continuous boot override, power on, restart and off, CreateSession and
// DeleteSession, and redfish_config SetBiosAttributes. The playbook asserts
// each task's result; at each of its checkpoints this test checks the VM in
// the cluster and lets the playbook go on.
func TestAnsible(t *testing.T) {
	playbook, err := exec.LookPath("ansible-playbook")
	if err != nil {
		testutil.Missing(t, "ansible-playbook not installed (apt-get install --no-install-recommends ansible)")
	}
	book, err := filepath.Abs(filepath.Join("testdata", "ansible_redfish.yml"))
	if err != nil {
		t.Fatal(err)
	}
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		t.Parallel()
		a := adminFor(t, env)
		i := vmAnsible
		boot, deploy := imageURL(env, "boot.iso"), imageURL(env, "deploy.iso")
		var cdVMI types.UID
		checks := map[string]func(t *testing.T){
			"inserted-system": func(t *testing.T) { waitMedia(t, a, i, boot, "/redfish/v1/Systems/") },
			"cd-booted": func(t *testing.T) {
				vmi := a.waitRunning(t, i)
				cdVMI = vmi.GetUID()
				if got := sim.Boots(vmi); len(got) != 1 || got[0] != mediaDisk() {
					t.Errorf("the Cd/Once power-on booted %v, want %s", got, mediaDisk())
				}
				checkRunStrategy(t, a, i, kubevirt.RunStrategyRerunOnFailure)
			},
			"disk-booted": func(t *testing.T) {
				var vmi *unstructured.Unstructured
				waitFor(t, vmName(i)+" restarted into a new VMI", func() (bool, string) {
					vmi = a.vmi(t.Context(), t, i)
					return vmi != nil && vmi.GetUID() != cdVMI && phase(vmi) == "Running", "phase " + phase(vmi)
				})
				if got := sim.Boots(vmi); len(got) != 1 || got[0] != "rootdisk" {
					t.Errorf("the restart with Hdd/Continuous booted %v, want rootdisk", got)
				}
				checkEjected(t, a, i)
				checkRunStrategy(t, a, i, kubevirt.RunStrategyRerunOnFailure)
			},
			"inserted-manager": func(t *testing.T) { waitMedia(t, a, i, deploy, "/redfish/v1/Managers/") },
			"off": func(t *testing.T) {
				waitFor(t, vmName(i)+" VMI gone", func() (bool, string) {
					vmi := a.vmi(t.Context(), t, i)
					return vmi == nil, "phase " + phase(vmi)
				})
				checkRunStrategy(t, a, i, kubevirt.RunStrategyHalted)
				checkEjected(t, a, i)
			},
			"secure-boot": func(t *testing.T) {
				on, _, err := unstructured.NestedBool(templateSpec(t, a.vm(t.Context(), t, i)), "domain", "firmware", "bootloader", "efi", "secureBoot")
				if err != nil || !on {
					t.Errorf("VM firmware.bootloader.efi.secureBoot %v (%v) after SetBiosAttributes SecureBoot Enabled, want true", on, err)
				}
			},
		}
		runPlaybook(t, playbook, book, playbookVars(t, env, i), checks)
		waitFor(t, vmName(i)+" import pods and PVC gone", func() (bool, string) {
			left := a.mediaObjects(t.Context(), t, i)
			return len(left) == 0, strings.Join(left, ", ")
		})
	})
}

// playbookVars are the playbook's extra vars for VM i of env, with what
// the bridge serves of the resources redfish_info reads that it may lack.
func playbookVars(t *testing.T, env *demo.Env, i int) map[string]any {
	t.Helper()
	client := redfishClient()
	root := getJSON(t, client, env, "/redfish/v1")
	sys := getJSON(t, client, env, "/redfish/v1/Systems/"+sysID(i))
	mgr := getJSON(t, client, env, "/redfish/v1/Managers/"+sysID(i))
	bootSettings, _ := sys["Boot"].(map[string]any)
	has := func(m map[string]any, key string) bool { _, ok := m[key]; return ok }
	served := map[string]bool{
		"update_service":   has(root, "UpdateService"),
		"memory":           has(sys, "Memory"),
		"boot_order":       has(bootSettings, "BootOrder"),
		"network_protocol": has(mgr, "NetworkProtocol"),
		"manager_nics":     has(mgr, "EthernetInterfaces"),
	}
	t.Logf("the bridge serves (what redfish_info must then read): %v", served)
	return map[string]any{
		"baseuri": strings.TrimPrefix(env.URL, "https://"), "username": env.User, "password": env.Password,
		"sys_id": sysID(i), "boot_iso": imageURL(env, "boot.iso"), "deploy_iso": imageURL(env, "deploy.iso"),
		"served": served,
	}
}

// runPlaybook runs ansible-playbook on book with vars. When the playbook
// reaches "checkpoint <name>", it runs checks[name] and writes the file
// the checkpoint waits for. It fails the test if the playbook fails or
// skips a checkpoint.
func runPlaybook(t *testing.T, playbook, book string, vars map[string]any, checks map[string]func(t *testing.T)) {
	t.Helper()
	dir := t.TempDir()
	ack := filepath.Join(dir, "ack")
	for _, d := range []string{ack, filepath.Join(dir, "home"), filepath.Join(dir, "tmp")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	vars["ack_dir"] = ack
	raw, err := json.Marshal(vars)
	if err != nil {
		t.Fatal(err)
	}
	varsFile, cfg := filepath.Join(dir, "vars.json"), filepath.Join(dir, "ansible.cfg")
	for name, data := range map[string][]byte{varsFile: raw, cfg: nil} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, playbook, "-i", "localhost,", "-e", "@"+varsFile,
		"-e", "ansible_python_interpreter=/usr/bin/python3", book)
	// Its own process group: a failed test kills the modules it runs too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	// Debian's python3 with no CA bundle of the environment (the modules
	// do not verify the demo's self-signed certificate), and an empty
	// ansible.cfg: nothing of the user's configuration.
	cmd.Env = append(pythonEnviron(), "ANSIBLE_CONFIG="+cfg, "ANSIBLE_HOME="+filepath.Join(dir, "home"),
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, "tmp"), "ANSIBLE_REMOTE_TEMP="+filepath.Join(dir, "tmp"),
		"ANSIBLE_PIPELINING=True", "ANSIBLE_NOCOLOR=True", "ANSIBLE_LOCALHOST_WARNING=False",
		"ANSIBLE_INVENTORY_UNPARSED_WARNING=False", "PYTHONUNBUFFERED=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ansible-playbook: %v", err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			cancel()
			_ = cmd.Wait()
		}
	})
	var out strings.Builder
	seen := map[string]bool{}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		out.WriteString(line + "\n")
		m := checkpointTask.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		check, ok := checks[m[1]]
		if !ok {
			t.Fatalf("the playbook reached checkpoint %q, which the test does not know", m[1])
		}
		t.Logf("TIMING ansible-playbook at checkpoint %s after %s", m[1], time.Since(start).Round(time.Millisecond))
		seen[m[1]] = true
		check(t)
		if err := os.WriteFile(filepath.Join(ack, m[1]), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	err = cmd.Wait()
	waited = true
	t.Logf("TIMING ansible-playbook %s: %s", filepath.Base(book), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("ansible-playbook failed (%v):\n%s%s", err, tail(out.String()), tail(stderr.String()))
	}
	for name := range checks {
		if !seen[name] {
			t.Errorf("the playbook passed without reaching checkpoint %s:\n%s", name, tail(out.String()))
		}
	}
	if t.Failed() {
		t.Logf("ansible-playbook output:\n%s", tail(out.String()))
	}
}

// waitMedia waits until VM i's template has the media CD-ROM with its
// volume on the slot's claim, the slot Ready with image, inserted through
// an action under base (the System's or the Manager's URIs).
func waitMedia(t *testing.T, a admin, i int, image, base string) {
	t.Helper()
	var s system.MediaSlot
	waitFor(t, vmName(i)+" media CD-ROM in the template, slot Ready", func() (bool, string) {
		vm := a.vm(t.Context(), t, i)
		spec := templateSpec(t, vm)
		s = slot(t, vm)
		var cd bool
		for _, d := range disks(t, spec) {
			cd = cd || (d.Name == mediaDisk() && d.CDROM)
		}
		ok := cd && volumes(t, spec)[mediaDisk()] == claimOf(i) && s.Phase == system.MediaReady
		return ok, "slot " + string(s.Phase) + " " + s.Image
	})
	if s.Image != image || !strings.HasPrefix(s.ActionURI, base) {
		t.Errorf("%s slot image %s inserted through %s, want %s through %s...", vmName(i), s.Image, s.ActionURI, image, base)
	}
}

// checkEjected waits until VM i's template has only its root disk and
// empty CD drives and the slot is empty.
func checkEjected(t *testing.T, a admin, i int) {
	t.Helper()
	waitFor(t, vmName(i)+" template back to rootdisk alone, slot empty", func() (bool, string) {
		vm := a.vm(t.Context(), t, i)
		tmpl := templateSpec(t, vm)
		ds, vs, s := disks(t, tmpl), volumes(t, tmpl), slot(t, vm)
		ok := rootAndEmptyDrives(ds, vs) && s.Phase == system.MediaEmpty
		return ok, fmt.Sprintf("disks %+v, volumes %v, slot %+v", ds, vs, s)
	})
}

func checkRunStrategy(t *testing.T, a admin, i int, want kubevirt.RunStrategyValue) {
	t.Helper()
	if got := kubevirt.RunStrategyOf(a.vm(t.Context(), t, i)); got != want {
		t.Errorf("%s runStrategy %s, want %s", vmName(i), got, want)
	}
}
