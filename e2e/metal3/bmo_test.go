package metal3

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// bmoEnv overrides where the baremetal-operator manager is.
const bmoEnv = "REDFISH_BRIDGE_BMO"

// bmoFastEnv overrides where the baremetal-operator 0.14 manager is.
const bmoFastEnv = "REDFISH_BRIDGE_BMO_014"

// managerPath is the manager of version (0.13.2 or 0.14) hack/bmo.sh
// builds ($REDFISH_BRIDGE_BMO, $REDFISH_BRIDGE_BMO_014 override them),
// whether or not it is there.
func managerPath(ctx context.Context, version string) (string, error) {
	env := bmoEnv
	if version != "0.13.2" {
		env = bmoFastEnv
	}
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	root, err := testutil.FindModuleRoot()
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, filepath.Join(root, "hack", "bmo.sh"), "path", version).Output() // the repository's script
	if err != nil {
		return "", fmt.Errorf("hack/bmo.sh path %s: %w", version, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// bmo is a running baremetal-operator manager: out of cluster against one
// cluster's admin kubeconfig, watching every namespace, its webhooks,
// metrics and health endpoints off, talking to a noauth Ironic.
type bmo struct {
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startBMO starts manager with its log in dir/bmo.log, watching only
// namespace (WATCH_NAMESPACE: two releases share a cluster, each its own
// hosts).
func startBMO(manager, dir, kubeconfig, ironicURL, namespace string) (*bmo, error) {
	auth := filepath.Join(dir, "auth") // empty: no ironic/ credentials in it, so noauth
	if err := os.MkdirAll(auth, 0o755); err != nil {
		return nil, fmt.Errorf("bmo dir: %w", err)
	}
	b := &bmo{log: filepath.Join(dir, "bmo.log"), done: make(chan struct{})}
	f, err := os.Create(b.log)
	if err != nil {
		return nil, fmt.Errorf("bmo log: %w", err)
	}
	b.cmd = exec.Command(manager, "-webhook-port=0", "-metrics-addr=0", "-health-addr=0", "-dev") // the built manager; ended by stop
	b.cmd.Env = append(os.Environ(),
		"KUBECONFIG="+kubeconfig,
		"IRONIC_ENDPOINT="+ironicURL+"/v1/",
		"METAL3_AUTH_ROOT_DIR="+auth,
		"OPERATOR_NAME=baremetal-operator",
		"WATCH_NAMESPACE="+namespace,
		// 0.14 loads its Ironic provisioner from a plugin hack/bmo.sh
		// builds beside it (0.13.2 ignores the variable).
		"PROVISIONER_PLUGIN_DIR="+filepath.Join(filepath.Dir(manager), "plugins"),
	)
	b.cmd.Stdout, b.cmd.Stderr = f, f
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start baremetal-operator: %w", err)
	}
	go func() {
		_ = b.cmd.Wait()
		_ = f.Close()
		close(b.done)
	}()
	return b, nil
}

// exited is why the manager is no longer running ("" while it runs).
func (b *bmo) exited() string {
	select {
	case <-b.done:
		return fmt.Sprintf("baremetal-operator exited (%v):\n%s", b.cmd.ProcessState, b.logTail(30, ""))
	default:
		return ""
	}
}

// stop ends the manager (SIGTERM, SIGKILL after 10 s).
func (b *bmo) stop() error {
	pgid := b.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-b.done:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-b.done:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("baremetal-operator still running 10 s after SIGKILL")
	}
}

// logTail is the last n lines of the manager's log containing filter.
func (b *bmo) logTail(n int, filter string) string {
	return ironicproc.TailFile(b.log, "baremetal-operator", n, filter)
}
