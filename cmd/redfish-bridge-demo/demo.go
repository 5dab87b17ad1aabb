package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/media"
)

// runDemo runs the product on its embedded default until Ctrl-C.
func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("redfish-bridge-demo", flag.ContinueOnError)
	vms := fs.Int("vms", 3, "number of sample VirtualMachines (vm-0..; their author owns firmware.bootloader.efi: they boot UEFI until a client asks for Legacy, which removes it)")
	firmwareVMs := fs.Int("firmware-vms", 1, "number of sample VirtualMachines without an authored bootloader (vm-fw-0..): the bridge may switch their boot mode between Legacy and UEFI")
	variant := fs.String("crd-variant", string(crds.Stock), "KubeVirt CRD variant: stock (atomic lists, as KubeVirt installs it) or maplist")
	listen := fs.String("listen", "127.0.0.1:8443", "Redfish HTTPS address")
	cdi := fs.Bool("cdi", false, "run CDI v1.66.0's own cdi-controller (bin/cdi-controller, built by make tools; needs root): images are imported through CDI DataVolumes instead of the bridge's import pods")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	began := time.Now()
	env, err := demo.Start(ctx, demo.Options{
		Variant: crds.Variant(*variant), VMs: *vms, FirmwareVMs: *firmwareVMs, Listen: *listen,
		StartDelay: 2 * time.Second, StopDelay: time.Second, CDI: *cdi,
	})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	slog.InfoContext(ctx, "demo ready", "after", time.Since(began).Round(time.Millisecond))
	printDemo(env, *firmwareVMs > 0)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "stopping the demo ...")
	return env.Stop()
}

// banner is what the demo's banner names: where the service listens, who
// to log in as, and which sample VMs exist.
type banner struct {
	URL, User, Password string
	Kubeconfig          string
	ImagesURL           string
	Addr                string // host:port, for redfishtool
	// FirmwareVM: vm-fw-0 exists ([demo.SampleFirmwareVM]).
	FirmwareVM bool
	// ImportMethod is how inserted images are imported ([demo.Env.ImportMethod]).
	ImportMethod string
}

// printDemo prints how to use env; withFirmwareVM: vm-fw-0 exists.
func printDemo(env *demo.Env, withFirmwareVM bool) {
	writeBanner(os.Stdout, banner{
		URL: env.URL, User: env.User, Password: env.Password, Kubeconfig: env.Cluster.Kubeconfig,
		ImagesURL: env.Images.URL, Addr: env.Bridge.Addr, FirmwareVM: withFirmwareVM, ImportMethod: env.ImportMethod,
	})
}

// importMethodLine says how the demo imports inserted images.
func importMethodLine(method string) string {
	if method == media.ImportMethodCDI {
		return "cdi: a CDI DataVolume per insert, reconciled by CDI v1.66.0's own cdi-controller (-cdi); its importer pods run on the simulated node"
	}
	return "pod: the bridge's import pod per insert (-cdi runs CDI's own cdi-controller instead)"
}

// writeBanner writes b's banner to w: the service, sample requests, and
// what a boot mode change does to each kind of sample VM. vm-0's author
// owns firmware.bootloader.efi (Secure Boot off), so it boots UEFI until a
// client asks for Legacy, which removes the author's efi (apply's release
// of a foreign efi) and boots it BIOS; vm-fw-0 has no authored bootloader.
func writeBanner(w io.Writer, b banner) {
	sys := demo.VMNamespace + ".vm-0"
	fmt.Fprintf(w, `
redfish-bridge demo is running (Ctrl-C stops everything).

  Redfish service   %[1]s/redfish/v1  (self-signed certificate: use -k)
  web pages         %[1]s/ui/  (log in, the Systems at a glance; docs/web-ui.md)
  user / password   %[2]s / %[3]s   (ReadOnly: %[9]s / %[3]s, reads only, a view-only console)
  kubeconfig        %[4]s   (kubectl --kubeconfig %[4]s get vm -n %[5]s --show-managed-fields -o yaml)
  sample ISOs       %[6]s/images/boot.iso, %[6]s/images/deploy.iso
  import method     %[10]s

Try:
  curl -k %[1]s/redfish/v1/
  curl -k -u %[2]s:%[3]s %[1]s/redfish/v1/Systems
  curl -k -u %[2]s:%[3]s -H 'Content-Type: application/json' -d '{"Image":"%[6]s/images/boot.iso"}' %[1]s/redfish/v1/Managers/%[7]s/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia
  curl -k -u %[2]s:%[3]s -X PATCH -H 'Content-Type: application/json' -d '{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}' %[1]s/redfish/v1/Systems/%[7]s
  curl -k -u %[2]s:%[3]s -H 'Content-Type: application/json' -d '{"ResetType":"On"}' %[1]s/redfish/v1/Systems/%[7]s/Actions/ComputerSystem.Reset
  redfishtool -r %[8]s -u %[2]s -p %[3]s -S Always Systems
`, b.URL, b.User, b.Password, b.Kubeconfig, demo.VMNamespace, b.ImagesURL, sys, b.Addr, demo.ViewerUser, importMethodLine(b.ImportMethod))
	fmt.Fprintf(w, `
Boot mode (vm-0 boots UEFI as its author wrote it, until a client asks for Legacy:
the bridge then removes the author's firmware.bootloader.efi and vm-0 boots BIOS;
Legacy is refused while Secure Boot is on):
  curl -k -u %[2]s:%[3]s -X PATCH -H 'Content-Type: application/json' -d '{"Boot":{"BootSourceOverrideMode":"Legacy"}}' %[1]s/redfish/v1/Systems/%[4]s
`, b.URL, b.User, b.Password, sys)
	if !b.FirmwareVM {
		return
	}
	fmt.Fprintf(w, `  (vm-fw-0 has no authored bootloader: the bridge switches it between Legacy and UEFI, with Secure Boot)
  curl -k -u %[2]s:%[3]s -X PATCH -H 'Content-Type: application/json' -d '{"Boot":{"BootSourceOverrideMode":"UEFI"}}' %[1]s/redfish/v1/Systems/%[4]s
  curl -k -u %[2]s:%[3]s %[1]s/redfish/v1/Systems/%[4]s/Bios   (current; /Bios/Settings: pending, applied at the next boot)
`, b.URL, b.User, b.Password, demo.VMNamespace+"."+demo.FirmwareVMNames(1)[0])
}
