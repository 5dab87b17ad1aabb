package testcluster_test

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestCDIAPIServer runs CDI v1.66.0's own cdi-apiserver (built from source)
// with CDI's own CRDs and webhook configurations: its DataVolume webhook
// denies a DataVolume CDI cannot import (no source; an ftp URL) and admits
// the bridge's shape (http url and certConfigMap, never a secretRef;
// spec.storage ReadWriteOnce, Filesystem).
// Port 8443, which cdi-apiserver listens on in its own network namespace,
// is held on the host's loopback meanwhile where it is free: the
// namespace keeps the two apart.
func TestCDIAPIServer(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Missing(t, "root, for CDI's network namespace")
	}
	// Whatever holds 8443 here (another test's demo), cdi-apiserver must
	// still start. Not holding it is no failure: the namespace is checked
	// either way.
	if l, err := net.Listen("tcp", "127.0.0.1:8443"); err == nil {
		t.Cleanup(func() { _ = l.Close() })
	}
	c := testcluster.ForTestWith(t, testcluster.Options{Variant: crds.Stock, VirtAPI: true})
	if err := c.RunCDIAPIServer(t.Context()); errors.Is(err, testcluster.ErrMissingBinary) {
		testutil.Missing(t, "%v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	ns := c.TestNamespace(t)
	dvs := dynamic.NewForConfigOrDie(c.Admin).Resource(cdiv1beta1.SchemeGroupVersion.WithResource("datavolumes")).Namespace(ns)
	storage := map[string]any{
		"accessModes": []any{"ReadWriteOnce"}, "volumeMode": "Filesystem",
		"resources": map[string]any{"requests": map[string]any{"storage": "64Mi"}},
	}
	for _, tc := range []struct {
		name   string
		source map[string]any
		denial string // "" admits
	}{
		{"no source", nil, "Data volume should have either Source or SourceRef, or be externally populated"},
		{"ftp url", map[string]any{"http": map[string]any{"url": "ftp://images.example/boot.iso"}}, "Invalid source URL scheme: ftp://images.example/boot.iso"},
		{"bridge shape", map[string]any{"http": map[string]any{
			"url": "https://images.example/boot.iso", "certConfigMap": "import-ca",
		}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := map[string]any{"storage": storage}
			if tc.source != nil {
				spec["source"] = tc.source
			}
			dv := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
				"metadata": map[string]any{"name": "dv-" + strings.ReplaceAll(tc.name, " ", "-")},
				"spec":     spec,
			}}
			_, err := dvs.Create(t.Context(), dv, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			switch {
			case tc.denial == "" && err != nil:
				t.Fatalf("CDI denied the bridge's DataVolume: %v", err)
			case tc.denial != "" && err == nil:
				t.Fatalf("CDI admitted it, want the denial %q", tc.denial)
			case tc.denial != "" && !strings.Contains(err.Error(), `admission webhook "`+testcluster.CDIWebhookDataVolume+`" denied the request`):
				t.Fatalf("denied, but not by CDI's webhook: %v", err)
			case tc.denial != "" && !strings.Contains(err.Error(), tc.denial):
				t.Errorf("CDI's denial = %v, want it to say %q", err, tc.denial)
			}
		})
	}
}
