package ironicproc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReleaseCommand: the host's Ironic runs on the host's python3; the
// chroot's in a private mount namespace, its directory bind-mounted where
// its ironic.conf says it is.
func TestReleaseCommand(t *testing.T) {
	tests := []struct {
		name     string
		r        Release
		wantName string
		wantTail []string
	}{
		{"host", Host, Python, []string{"-c", "x"}},
		{"chroot", Chroot("/cache/root"), "unshare", []string{"sh", "/cache/root", "/tmp/d", "-c", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, args := tt.r.python("/tmp/d", "-c", "x")
			if name != tt.wantName {
				t.Errorf("command %q, want %q", name, tt.wantName)
			}
			if diff := cmp.Diff(tt.wantTail, args[max(0, len(args)-len(tt.wantTail)):]); diff != "" {
				t.Errorf("arguments end (-want +got):\n%s", diff)
			}
			if tt.r.Root != "" && !strings.Contains(strings.Join(args, " "), `mount --bind "$dir" "$r`+chrootDir+`"`) {
				t.Errorf("no bind mount of the directory at %s: %q", chrootDir, args)
			}
		})
	}
}

// TestConfigPaths: in a chroot, ironic.conf names the directory as the
// chroot sees it, and only 39 enables redfish-https, the interfaces
// baremetal-operator names (its defaults unchanged) and the ipmi hardware
// type (with pxe, its files under the directory) and the ipmitool-socat
// console.
func TestConfigPaths(t *testing.T) {
	hostIfaces := []string{"enabled_inspect_interfaces = redfish,no-inspect\n", "enabled_raid_interfaces = no-raid\n",
		"default_vendor_interface = no-vendor\n", "enabled_vendor_interfaces = no-vendor,redfish\n"}
	metal3Ifaces := []string{
		"enabled_inspect_interfaces = redfish,agent,no-inspect\nenabled_boot_interfaces",
		"enabled_raid_interfaces = no-raid,redfish\n", "default_raid_interface = no-raid\n",
		"enabled_firmware_interfaces = redfish,no-firmware\n", "default_firmware_interface = no-firmware\n",
		// baremetal-operator's BMCEventSubscription: the redfish vendor
		// passthru on the nodes it creates, which name no vendor interface
		// (each hardware type's first enabled: redfish for redfish nodes).
		"enabled_vendor_interfaces = no-vendor,redfish\n",
	}
	tests := []struct {
		name      string
		r         Release
		dir       string
		want      []string
		notInConf string
	}{
		{"host", Host, "/tmp/d", append([]string{"enabled_boot_interfaces = redfish-virtual-media\n", "enabled_hardware_types = redfish\n",
			"enabled_console_interfaces = no-console\n"}, hostIfaces...), ""},
		{"chroot", Chroot("/cache/root"), chrootDir, append([]string{
			"enabled_boot_interfaces = redfish-virtual-media,redfish-https,pxe\n",
			"enabled_hardware_types = redfish,ipmi\n", "enabled_power_interfaces = redfish,ipmitool\n",
			"enabled_management_interfaces = redfish,ipmitool\n", "[ipmi]\nmin_command_interval = 1\n",
			"tftp_root = " + chrootDir + "/tftpboot\n",
			// the ipmitool-socat console, its password in ipmitool's
			// environment (socat 1.8.1.3 aborts on Ironic's -f command)
			"enabled_console_interfaces = no-console,ipmitool-socat\ndefault_console_interface = no-console\n",
			"store_cred_in_env = true\n", "[console]\nsocat_address = 127.0.0.1\nport_range = 20000:29999\n",
		}, metal3Ifaces...), "/tmp/d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := config(Options{Dir: "/tmp/d", Release: tt.r}, tt.dir, "127.0.0.1:1", "http://127.0.0.1:2")
			if redfishBIOS := config(Options{Dir: "/tmp/d", Release: tt.r, DefaultBIOSInterface: "redfish"}, tt.dir, "127.0.0.1:1", "http://127.0.0.1:2"); strings.Contains(redfishBIOS, "enabled_hardware_types = redfish,ipmi") {
				t.Errorf("the ipmi hardware type with a redfish bios default (which it does not support) stops the conductor:\n%s", redfishBIOS)
			}
			if strings.Contains(conf, "webserver_verify_ca") {
				t.Errorf("webserver_verify_ca without WebserverCAs:\n%s", conf)
			}
			// Ironic's trust of its HTTPS image URLs, in [DEFAULT] where
			// oslo.config reads it, as the chroot sees the file.
			if ca := config(Options{Dir: "/tmp/d", Release: tt.r, WebserverCAs: "PEM"}, tt.dir, "127.0.0.1:1", "http://127.0.0.1:2"); !strings.Contains(ca, "tempdir = "+tt.dir+"/tmp\nwebserver_verify_ca = "+tt.dir+"/"+webserverCAFile+"\n") {
				t.Errorf("ironic.conf with WebserverCAs lacks webserver_verify_ca = %s/%s in [DEFAULT]:\n%s", tt.dir, webserverCAFile, ca)
			}
			if tt.r.IPMI && strings.Contains(conf, "default_vendor_interface = redfish") {
				t.Errorf("a redfish vendor default with the ipmi hardware type (which does not support it) stops the conductor:\n%s", conf)
			}
			for _, want := range append(tt.want, "connection = sqlite:///"+tt.dir+"/ironic.sqlite\n", "http_root = "+tt.dir+"/httproot\n") {
				if !strings.Contains(conf, want) {
					t.Errorf("ironic.conf lacks %q:\n%s", want, conf)
				}
			}
			if tt.notInConf != "" && strings.Contains(conf, tt.notInConf) {
				t.Errorf("ironic.conf names the host path %s:\n%s", tt.notInConf, conf)
			}
		})
	}
}

// TestConfigDefaultBIOS: nodes get no-bios unless the options name a
// default bios interface (e2e/metal3: redfish, for baremetal-operator's
// HostFirmwareSettings); both stay enabled.
func TestConfigDefaultBIOS(t *testing.T) {
	tests := []struct {
		name, bios, want string
	}{
		{"unset", "", "default_bios_interface = no-bios\n"},
		{"redfish", "redfish", "default_bios_interface = redfish\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := config(Options{Dir: "/tmp/d", Release: Chroot("/cache/root"), DefaultBIOSInterface: tt.bios}, chrootDir, "127.0.0.1:1", "http://127.0.0.1:2")
			for _, want := range []string{tt.want, "enabled_bios_interfaces = redfish,no-bios\n"} {
				if !strings.Contains(conf, want) {
					t.Errorf("ironic.conf lacks %q:\n%s", want, conf)
				}
			}
		})
	}
}

// TestConfigInsertPolling: VMediaInsertPolling writes Ironic 39's option
// into [redfish]; off, the option is absent (Ironic's default, off).
func TestConfigInsertPolling(t *testing.T) {
	const want = "[redfish]\nuse_swift = false\n"
	for _, on := range []bool{false, true} {
		conf := config(Options{Dir: "/tmp/d", Release: Chroot("/cache/root"), VMediaInsertPolling: on}, chrootDir, "127.0.0.1:1", "http://127.0.0.1:2")
		_, redfish, _ := strings.Cut(conf, want)
		section, _, _ := strings.Cut(redfish, "\n[")
		if got := strings.Contains(section+"\n", "\nenable_vmedia_insert_polling = true\n"); got != on {
			t.Errorf("VMediaInsertPolling %v: [redfish] has the option %v:\n%s", on, got, conf)
		}
	}
}
