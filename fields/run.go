package fields

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// ErrDeviation is returned by [Run] with --check when the report has
// deviations.
var ErrDeviation = errors.New("ownership deviates from the table")

// Usage is the command line.
const Usage = "fields NAMESPACE/VM [--kubeconfig FILE] [--check] [-o text|json] [--mode auto|map|atomic]"

// Run is the `fields` command (and the kubectl-redfish_fields plugin).
// The flags are declared on fs, the caller's: its name, output and Usage
// are what --help and a flag error print.
func Run(ctx context.Context, fs *flag.FlagSet, args []string, stdout io.Writer) error {
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	check := fs.Bool("check", false, "exit non-zero when ownership deviates from the table, or another writer wrote an object the bridge made for the VM")
	output := fs.String("o", "text", "output format: text or json")
	modeFlag := fs.String("mode", "auto", "list mode: auto (from the CRD, else from managedFields), map or atomic")
	var target string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		target, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("usage: %s: %w", Usage, err)
	}
	if target == "" && fs.NArg() > 0 {
		target = fs.Arg(0)
	}
	ns, name, ok := strings.Cut(target, "/")
	if !ok || ns == "" || name == "" || fs.NArg() > 1 {
		return fmt.Errorf("usage: %s", Usage)
	}
	if *output != "text" && *output != "json" {
		return fmt.Errorf("-o %q: want text or json", *output)
	}
	cfg, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	r, err := Load(ctx, dyn, ns, name, *modeFlag)
	if err != nil {
		return err
	}
	if *output == "json" {
		err = WriteJSON(stdout, r)
	} else {
		err = WriteText(stdout, r)
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if *check && len(r.Deviations) > 0 {
		return fmt.Errorf("%s: %d deviation(s): %w", r.VM, len(r.Deviations), ErrDeviation)
	}
	return nil
}

// Load reads the VM and the objects the bridge made for it and builds its
// report; mode is "auto", "map" or "atomic".
func Load(ctx context.Context, dyn dynamic.Interface, namespace, name, mode string) (*Report, error) {
	vm, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get VirtualMachine %s/%s: %w", namespace, name, err)
	}
	var m apply.Mode
	source := "flag"
	switch mode {
	case string(apply.ModeMap), string(apply.ModeAtomic):
		m = apply.Mode(mode)
	case "auto":
		if m, err = apply.DetectMode(ctx, dyn); err == nil {
			source = "crd"
		} else if shape, ok := ModeFromManagedFields(vm); ok {
			m, source = shape, "managedFields"
		} else {
			m, source = apply.ModeAtomic, "default"
		}
	default:
		return nil, fmt.Errorf("--mode %q: want auto, map or atomic", mode)
	}
	r, err := Inspect(vm, m, source)
	if err != nil {
		return nil, err
	}
	objs, notes, err := ListObjects(ctx, dyn, namespace)
	if err != nil {
		return nil, err
	}
	InspectObjects(r, vm, objs)
	r.Notes = append(r.Notes, notes...)
	return r, nil
}

func restConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes client configuration: %w", err)
	}
	return cfg, nil
}
