package ironicproc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Release is an Ironic the tests can run: Debian 12's on the host, or a
// newer one in a chroot (hack/ironic-chroot.sh).
type Release struct {
	// Name is the version, in subtest names and logs ("21.4", "39").
	Name string
	// Root is the chroot Ironic runs in; "" is the host.
	Root string
	// Package holds Ironic's entry points: ironic.cmd (21.4) or
	// ironic.command (39).
	Package string
	// APIVersion is the microversion the tests' client asks for.
	APIVersion string
	// HTTPBoot enables the redfish-https boot interface (UefiHttp and
	// HttpBootUri; not in 21.4).
	HTTPBoot bool
	// Metal3 enables the interfaces metal3's baremetal-operator names when
	// it creates a node (inspect agent, firmware and raid redfish), the
	// defaults unchanged (redfish inspection, no-firmware, no-raid).
	Metal3 bool
	// IPMI enables the `ipmi` hardware type (ipmitool power and
	// management, pxe boot) beside redfish; its ipmitool is the chroot's
	// (hack/ironic-chroot.sh installs it).
	IPMI bool
}

// Host is Debian 12's python3-ironic.
var Host = Release{Name: "21.4", Package: "ironic.cmd", APIVersion: APIVersion}

// APIVersionHealth is 1.109, the API version of Ironic 39's node.health.
const APIVersionHealth = "1.109"

// Chroot is the Ironic 39 of hack/ironic-chroot.sh, installed at root.
func Chroot(root string) Release {
	return Release{Name: "39", Root: root, Package: "ironic.command", APIVersion: APIVersionHealth, HTTPBoot: true, Metal3: true, IPMI: true}
}

// chrootEnv overrides where the Ironic 39 chroot is.
const chrootEnv = "REDFISH_BRIDGE_IRONIC_CHROOT"

// ChrootPath is where hack/ironic-chroot.sh of the module at moduleRoot
// builds the chroot ($REDFISH_BRIDGE_IRONIC_CHROOT overrides it), whether
// or not it is there.
func ChrootPath(ctx context.Context, moduleRoot string) (string, error) {
	if p := os.Getenv(chrootEnv); p != "" {
		return p, nil
	}
	out, err := exec.CommandContext(ctx, filepath.Join(moduleRoot, "hack", "ironic-chroot.sh"), "path").Output() // the repository's script
	if err != nil {
		return "", fmt.Errorf("hack/ironic-chroot.sh path: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// chrootDir is where the chroot sees [Options.Dir] (bind-mounted).
const chrootDir = "/run/redfish-bridge-ironic"

// Available reports why r cannot run here (nil when it can): its Ironic
// must be importable by its python3.
func (r Release) Available(ctx context.Context) error {
	if r.Root != "" {
		if _, err := os.Stat(filepath.Join(r.Root, "usr", "bin", "python3")); err != nil {
			return fmt.Errorf("no Ironic %s chroot at %s (make ironic-chroot, as root): %w", r.Name, r.Root, err)
		}
		if os.Geteuid() != 0 {
			return fmt.Errorf("Ironic %s runs in a chroot: needs root", r.Name)
		}
	}
	name, args := r.python("", "-c", "import "+r.Package+".singleprocess")
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput() // fixed arguments
	if err != nil {
		return fmt.Errorf("Ironic %s (%s.singleprocess) not importable: %w: %s", r.Name, r.Package, err, bytes.TrimSpace(out))
	}
	return nil
}

// python is the command line running r's python3 with args. In a chroot it runs
// in a private mount namespace (unshare -m) that mounts /proc, /dev, fresh
// tmpfs /tmp and /run, and dir (when not "") at [chrootDir]: the mounts go
// with the process, whichever way it ends. The network namespace is the
// host's, loopback included.
func (r Release) python(dir string, args ...string) (string, []string) {
	if r.Root == "" {
		return Python, args
	}
	script := `set -e
r=$1 dir=$2
shift 2
mount -t proc proc "$r/proc"
mount --rbind /dev "$r/dev"
mount -t tmpfs tmpfs "$r/tmp"
mount -t tmpfs tmpfs "$r/run"
if [ -n "$dir" ]; then
  mkdir -p "$r` + chrootDir + `"
  mount --bind "$dir" "$r` + chrootDir + `"
fi
exec chroot "$r" /usr/bin/python3 "$@"`
	return "unshare", append([]string{"-m", "--propagation", "private", "/bin/sh", "-c", script, "sh", r.Root, dir}, args...)
}
