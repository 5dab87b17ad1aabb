package testcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
)

// The chart release the bridge's RBAC is rendered from: release name
// "redfish-bridge" makes the chart's object names the defaults the demo
// and the bridge use (Secrets redfish-bridge-users and
// redfish-bridge-session-key, ConfigMap redfish-bridge-sessions, Lease
// redfish-bridge).
const (
	chartRelease = "redfish-bridge"
	// ImageCAConfigMap is the bridge-wide CA bundle for image downloads
	// (key ca.crt, in the bridge's namespace) the chart is rendered with:
	// the bridge may read it.
	ImageCAConfigMap = "redfish-bridge-image-ca"
	// chartRBAC is the chart's RBAC template, relative to the chart.
	chartRBAC = "templates/rbac.yaml"
)

// ChartDir is the Helm chart the bridge's RBAC comes from:
// <module root>/deploy/redfish-bridge.
func ChartDir() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "deploy", "redfish-bridge"), nil
}

// installBridgeRBAC grants [BridgeUser] exactly what the Helm chart grants
// the bridge's ServiceAccount: the chart's RBAC template, rendered by
// bin/helm for a release serving every namespace with its own objects in
// ns (which must exist), is created with each binding's subject replaced
// by BridgeUser.
func (c *Cluster) installBridgeRBAC(ctx context.Context, cs kubernetes.Interface, ns string) error {
	rendered, err := c.renderChartRBAC(ctx, ns)
	if err != nil {
		return err
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: BridgeUser}}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(rendered), 4096)
	created := 0
	for {
		var raw rbacObject
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("decode the chart's %s: %w", chartRBAC, err)
		}
		if raw.Kind == "" {
			continue
		}
		if err := raw.create(ctx, cs, ns, subjects); err != nil {
			return err
		}
		created++
	}
	if created == 0 {
		return fmt.Errorf("the chart's %s rendered no RBAC objects", chartRBAC)
	}
	return nil
}

// renderChartRBAC runs `helm template` on the chart's RBAC template.
func (c *Cluster) renderChartRBAC(ctx context.Context, ns string) ([]byte, error) {
	chart, err := ChartDir()
	if err != nil {
		return nil, fmt.Errorf("find the chart for the bridge's RBAC: %w", err)
	}
	home := filepath.Join(c.Dir, "helm")
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, helmBinary), "template", chartRelease, chart,
		"--namespace", ns, "--show-only", chartRBAC, "--set", "imageCA.configMap="+ImageCAConfigMap)
	cmd.Env = append(os.Environ(), "HOME="+home,
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm template %s --show-only %s: %w: %s", chart, chartRBAC, err, stderr.Bytes())
	}
	return out, nil
}

// rbacObject is one object of the chart's RBAC template.
type rbacObject struct {
	Kind     string              `json:"kind"`
	Metadata metav1.ObjectMeta   `json:"metadata"`
	Rules    []rbacv1.PolicyRule `json:"rules"`
	RoleRef  rbacv1.RoleRef      `json:"roleRef"`
}

// create creates o, its namespaced kinds in ns, a binding with subjects.
func (o rbacObject) create(ctx context.Context, cs kubernetes.Interface, ns string, subjects []rbacv1.Subject) error {
	meta := metav1.ObjectMeta{Name: o.Metadata.Name, Labels: o.Metadata.Labels}
	var err error
	switch o.Kind {
	case "ClusterRole":
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: o.Rules}, metav1.CreateOptions{})
	case "ClusterRoleBinding":
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: o.RoleRef, Subjects: subjects}, metav1.CreateOptions{})
	case "Role":
		meta.Namespace = ns
		_, err = cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta, Rules: o.Rules}, metav1.CreateOptions{})
	case "RoleBinding":
		meta.Namespace = ns
		_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: o.RoleRef, Subjects: subjects}, metav1.CreateOptions{})
	default:
		return fmt.Errorf("the chart's %s holds a %s %s: not RBAC", chartRBAC, o.Kind, o.Metadata.Name)
	}
	if err != nil {
		return fmt.Errorf("create the chart's %s %s: %w", o.Kind, o.Metadata.Name, err)
	}
	return nil
}
