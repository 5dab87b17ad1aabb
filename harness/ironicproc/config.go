package ironicproc

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// config renders ironic.conf: one process, no RPC bus, no auth, sqlite, the
// redfish hardware type only, images passed to the BMC as the HTTP URLs
// they are (ramdisk_image_download_source http: nothing is rebuilt or
// cached), automated cleaning off, and the API's own URL (what the agent
// would call back) without a Keystone catalog. The one image the conductor
// does cache, what its vmedia attach API (baremetal-operator's DataImages)
// downloads, is cached under dir beside tempdir: it is hard-linked from the
// cache into tempdir, which fails across filesystems (EXDEV) with the
// default /var/lib/ironic/master_iso_images of a chroot.
//
// dir is o.Dir as Ironic sees it (in a chroot, where it is bind-mounted).
func config(o Options, dir, apiAddr, httpURL string) string {
	host, port, _ := strings.Cut(apiAddr, ":")
	secs := func(d, def time.Duration) int {
		if d <= 0 {
			d = def
		}
		return max(1, int(d/time.Second))
	}
	boot := "redfish-virtual-media"
	if o.Release.HTTPBoot {
		boot += ",redfish-https"
	}
	bios := o.DefaultBIOSInterface
	if bios == "" {
		bios = "no-bios"
	}
	polling := ""
	if o.VMediaInsertPolling {
		polling = "enable_vmedia_insert_polling = true\n"
	}
	webCA := ""
	if o.WebserverCAs != "" {
		webCA = "webserver_verify_ca = " + filepath.Join(dir, webserverCAFile) + "\n"
	}
	inspect, raid, metal3 := "redfish,no-inspect", "no-raid", ""
	if o.Release.Metal3 {
		// What baremetal-operator's node creation names; the defaults
		// stay those of the nodes the tests create themselves.
		inspect, raid = "redfish,agent,no-inspect", "no-raid,redfish"
		// baremetal-operator leaves the vendor interface to the default,
		// and its BMCEventSubscription calls the redfish passthru. No
		// default_vendor_interface: each hardware type takes the first of
		// its vendor interfaces that is enabled, redfish for redfish nodes
		// and no-vendor for ipmi nodes (a default of redfish, which the
		// ipmi type does not support, stops the conductor: "For hardware
		// type 'ipmi', no default value found for vendor interface").
		metal3 = "default_raid_interface = no-raid\n"
	} else {
		// The redfish vendor interface is enabled for the nodes that ask
		// for it (its event subscription passthru); the others keep none.
		metal3 = "default_vendor_interface = no-vendor\n"
	}
	hwTypes, power, mgmt, ipmi, console := "redfish", "redfish", "redfish", "", "no-console"
	defaultInspect := "default_inspect_interface = redfish\n"
	// Ironic wants each default interface to suit every enabled hardware
	// type: a redfish bios default (metal3's Ironic) leaves the ipmi
	// type out ("For hardware type 'ipmi', no default value found for
	// bios interface" stops the conductor).
	if o.Release.IPMI && bios == "no-bios" {
		// The ipmi hardware type drives nodes with the chroot's ipmitool;
		// its only boot interfaces are (i)PXE and HTTP, so pxe is enabled
		// with its files under dir. Ironic waits min_command_interval (5 s
		// by default) between two ipmitool runs to one BMC address, and
		// every node of the bridge has the same address.
		hwTypes, power, mgmt = "redfish,ipmi", "redfish,ipmitool", "redfish,ipmitool"
		// A default the ipmi type does not support stops the conductor;
		// without one each type takes its first enabled (redfish for
		// redfish nodes, as before).
		defaultInspect = ""
		boot += ",pxe"
		// The serial console a node asks for with console_interface
		// ipmitool-socat (redfish and ipmi nodes alike): the conductor runs
		// socat listening on 127.0.0.1 at a port of port_range it finds
		// free, exec'ing the chroot's `ipmitool ... sol activate` for each
		// connection. The default stays no-console: the redfish type
		// would otherwise take ipmitool-socat for every node. The password
		// goes to ipmitool in its environment (store_cred_in_env: -E), not
		// a file (-f path): the chroot's socat 1.8.1.3 aborts (malloc
		// assertion) on an EXEC of 15 words or more, and Ironic's command
		// with -f and -p is 15 (docs/ipmi.md).
		ipmi = fmt.Sprintf("[ipmi]\nmin_command_interval = 1\nstore_cred_in_env = true\n[pxe]\ntftp_root = %[1]s\ntftp_master_path = %[1]s/master_images\n"+
			"[console]\nsocat_address = 127.0.0.1\nport_range = 20000:29999\n", filepath.Join(dir, "tftpboot"))
		console = "no-console,ipmitool-socat\ndefault_console_interface = no-console"
	}
	return fmt.Sprintf(`[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = test-conductor
debug = true
use_stderr = true
state_path = %[1]s
tempdir = %[2]s
%[24]senabled_hardware_types = %[19]s
enabled_power_interfaces = %[20]s
enabled_management_interfaces = %[21]s
enabled_inspect_interfaces = %[13]s
%[23]senabled_boot_interfaces = %[12]s
enabled_deploy_interfaces = ramdisk,custom-agent
default_deploy_interface = ramdisk
enabled_network_interfaces = noop
enabled_bios_interfaces = redfish,no-bios
enabled_firmware_interfaces = redfish,no-firmware
default_firmware_interface = no-firmware
default_bios_interface = %[16]s
enabled_raid_interfaces = %[14]s
%[15]senabled_vendor_interfaces = no-vendor,redfish
enabled_console_interfaces = %[25]s
enabled_rescue_interfaces = no-rescue
enabled_storage_interfaces = noop
[api]
host_ip = %[3]s
port = %[4]s
api_workers = 1
[database]
connection = sqlite:///%[5]s
sqlite_synchronous = false
[conductor]
automated_clean = false
sync_power_state_interval = %[6]d
check_provision_state_interval = %[7]d
deploy_callback_timeout = %[8]d
clean_callback_timeout = %[8]d
power_state_change_timeout = 30
[deploy]
http_root = %[9]s
http_url = %[10]s
ramdisk_image_download_source = http
iso_master_path = %[17]s
[service_catalog]
endpoint_override = http://%[3]s:%[4]s
[redfish]
use_swift = false
# how often the bios interface polls a node it rebooted to apply settings (Ironic 39; default 60 s)
firmware_update_status_interval = 5
%[18]s%[22]s[dhcp]
dhcp_provider = none
[oslo_concurrency]
lock_path = %[11]s
`, dir, filepath.Join(dir, "tmp"), host, port, filepath.Join(dir, "ironic.sqlite"),
		secs(o.SyncPowerInterval, 60*time.Second), secs(o.CheckProvisionInterval, 60*time.Second),
		secs(o.CallbackTimeout, 1800*time.Second), filepath.Join(dir, "httproot"), httpURL, filepath.Join(dir, "locks"), boot,
		inspect, raid, metal3, bios, filepath.Join(dir, "master_iso_images"), polling,
		hwTypes, power, mgmt, ipmi, defaultInspect, webCA, console)
}
