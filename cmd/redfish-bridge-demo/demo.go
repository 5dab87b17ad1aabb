package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// runDemo runs the product on its embedded default until Ctrl-C.
func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("redfish-bridge-demo", flag.ContinueOnError)
	vms := fs.Int("vms", 3, "number of sample VirtualMachines (vm-0..; their author owns firmware.bootloader.efi: they boot UEFI)")
	firmwareVMs := fs.Int("firmware-vms", 1, "number of sample VirtualMachines without an authored bootloader (vm-fw-0..): the bridge may switch their boot mode between Legacy and UEFI")
	variant := fs.String("crd-variant", string(crds.Stock), "KubeVirt CRD variant: stock (atomic lists, as KubeVirt installs it) or maplist")
	listen := fs.String("listen", "127.0.0.1:8443", "Redfish HTTPS address")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	began := time.Now()
	env, err := demo.Start(ctx, demo.Options{
		Variant: crds.Variant(*variant), VMs: *vms, FirmwareVMs: *firmwareVMs, Listen: *listen,
		StartDelay: 2 * time.Second, StopDelay: time.Second,
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

// printDemo prints how to use env; withFirmwareVM: vm-fw-0 exists.
func printDemo(env *demo.Env, withFirmwareVM bool) {
	sys := demo.VMNamespace + ".vm-0"
	fmt.Printf(`
redfish-bridge demo is running (Ctrl-C stops everything).

  Redfish service   %[1]s/redfish/v1  (self-signed certificate: use -k)
  user / password   %[2]s / %[3]s
  kubeconfig        %[4]s   (kubectl --kubeconfig %[4]s get vm -n %[5]s --show-managed-fields -o yaml)
  sample ISOs       %[6]s/images/boot.iso, %[6]s/images/deploy.iso

Try:
  curl -k %[1]s/redfish/v1/
  curl -k -u %[2]s:%[3]s %[1]s/redfish/v1/Systems
  curl -k -u %[2]s:%[3]s -H 'Content-Type: application/json' -d '{"Image":"%[6]s/images/boot.iso"}' %[1]s/redfish/v1/Managers/%[7]s/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia
  curl -k -u %[2]s:%[3]s -X PATCH -H 'Content-Type: application/json' -d '{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}' %[1]s/redfish/v1/Systems/%[7]s
  curl -k -u %[2]s:%[3]s -H 'Content-Type: application/json' -d '{"ResetType":"On"}' %[1]s/redfish/v1/Systems/%[7]s/Actions/ComputerSystem.Reset
  redfishtool -r %[8]s -u %[2]s -p %[3]s -S Always Systems
`, env.URL, env.User, env.Password, env.Cluster.Kubeconfig, demo.VMNamespace, env.Images.URL, sys, env.Bridge.Addr)
	if !withFirmwareVM {
		return
	}
	fmt.Printf(`
Boot mode (vm-fw-0's firmware is the bridge's to change; vm-0's author owns efi, so it stays UEFI):
  curl -k -u %[2]s:%[3]s -X PATCH -H 'Content-Type: application/json' -d '{"Boot":{"BootSourceOverrideMode":"UEFI"}}' %[1]s/redfish/v1/Systems/%[4]s
  curl -k -u %[2]s:%[3]s %[1]s/redfish/v1/Systems/%[4]s/Bios   (current; /Bios/Settings: pending, applied at the next boot)
`, env.URL, env.User, env.Password, demo.VMNamespace+"."+demo.FirmwareVMNames(1)[0])
}
