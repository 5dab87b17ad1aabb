package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// solIPMIPassword is the bench admin's IPMI password.
const solIPMIPassword = "bench-ipmi-password"

// solTarget is the VM whose console the SOL figure goes through, and its
// IPMI port.
type solTarget struct {
	vm   string
	port int
}

// giveSOL gives vm a free UDP port of 127.0.0.1 (the author's
// annotation) and the admin an IPMI password.
func giveSOL(ctx context.Context, cluster *testcluster.Cluster, vm string) (solTarget, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return solTarget{}, fmt.Errorf("free UDP port: %w", err)
	}
	t := solTarget{vm: vm, port: c.LocalAddr().(*net.UDPAddr).Port}
	if err := c.Close(); err != nil {
		return t, err
	}
	dyn, err := dynamic.NewForConfig(cluster.Admin)
	if err != nil {
		return t, err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{ipmi.PortAnnotation: strconv.Itoa(t.port)}}})
	if err != nil {
		return t, err
	}
	if _, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(consoleNS).Patch(ctx, vm, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "vm-author"}); err != nil {
		return t, fmt.Errorf("annotate %s: %w", vm, err)
	}
	kube, err := kubernetes.NewForConfig(cluster.Admin)
	if err != nil {
		return t, err
	}
	if patch, err = json.Marshal(map[string]any{"data": map[string][]byte{demo.AdminUser + auth.SuffixIPMIPassword: []byte(solIPMIPassword)}}); err != nil {
		return t, err
	}
	if _, err := kube.CoreV1().Secrets(cluster.BridgeNamespace).Patch(ctx, demo.UsersSecret, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return t, fmt.Errorf("give %s an IPMI password: %w", demo.AdminUser, err)
	}
	return t, nil
}

// measureSOL runs Debian's ipmitool sol activate (lanplus, its stdin and
// stdout piped) on the target's console, reads up to the login prompt and
// echoes n bytes through it ([echo]) into res. Without ipmitool the
// figure is skipped.
func measureSOL(ctx context.Context, t solTarget, n int, res *ConsoleResult) error {
	path, err := exec.LookPath("ipmitool")
	if err != nil {
		res.SOLSkipped = "ipmitool not installed"
		return nil
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(cctx, path, "-I", "lanplus", "-H", "127.0.0.1", "-p", strconv.Itoa(t.port), // fixed arguments
		"-U", demo.AdminUser, "-P", solIPMIPassword, "sol", "activate")
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("ipmitool sol activate: %w", err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	if _, err := in.Write([]byte("\r")); err != nil {
		return err
	}
	if err := readUntil(cctx, out, []byte(sim.GuestLoginPrompt(t.vm))); err != nil {
		return fmt.Errorf("sol activate on %s: %w", t.vm, err)
	}
	res.SOLElapsed, err = echo(cctx, in, out, n)
	if err != nil {
		return errors.Join(fmt.Errorf("echo over SOL: %w", err), in.Close())
	}
	res.SOLEchoed = n
	return nil
}
