package deploy

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// renderObjects runs helm template with args and returns the objects by
// "Kind/name".
func renderObjects(t *testing.T, args ...string) map[string]*unstructured.Unstructured {
	t.Helper()
	out := mustHelm(t, append([]string{"template", "rb", chartDir, "--namespace", "bm"}, args...)...)
	objs := map[string]*unstructured.Unstructured{}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(out)), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("helm template %v: %v", args, err)
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		objs[u.GetKind()+"/"+u.GetName()] = u
	}
	return objs
}

// TestImageCacheChart: the chart always generates the image cache's
// secret (kept across upgrades by lookup, also while the cache is off);
// with the cache on the bridge reads it from the mounted Secret
// (--image-cache-key-file), an existing Secret replaces the generated
// one, and a pre-delete hook Job prunes the cache's entries in
// watchNamespaces as the bridge's ServiceAccount.
func TestImageCacheChart(t *testing.T) {
	const keyFile = "/etc/redfish-bridge/image-cache-key/image-cache-key"
	type rendered struct {
		KeySecret  bool   // the generated Secret, with a key of 64 characters
		KeyVolume  string // the Secret the Deployment mounts at the key file's directory
		KeyFile    string // image-cache-key-file in the config
		HookArgs   string // the pre-delete Job's args
		HookSA     string
		HookPolicy string // its hook-delete-policy
	}
	on := []string{"--set", "imageCache.enabled=true", "--set", "watchNamespaces={vms-a,vms-b}"}
	for _, tc := range []struct {
		name string
		args []string
		want rendered
	}{
		{"off: the secret only", nil, rendered{KeySecret: true}},
		{"on", on, rendered{KeySecret: true, KeyVolume: "rb-redfish-bridge-image-cache-key", KeyFile: keyFile,
			HookArgs: "cache prune --include-in-use --namespaces=vms-a,vms-b", HookSA: "rb-redfish-bridge", HookPolicy: "before-hook-creation,hook-succeeded"}},
		{"on, every namespace", []string{"--set", "imageCache.enabled=true"}, rendered{KeySecret: true, KeyVolume: "rb-redfish-bridge-image-cache-key", KeyFile: keyFile,
			HookArgs: "cache prune --include-in-use --namespaces=", HookSA: "rb-redfish-bridge", HookPolicy: "before-hook-creation,hook-succeeded"}},
		{"on, existing key Secret", append([]string{"--set", "imageCache.existingKeySecret=my-key", "--set", "imageCache.pruneOnUninstall=false"}, on...),
			rendered{KeyVolume: "my-key", KeyFile: keyFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderObjects(t, tc.args...)
			var got rendered
			if s := objs["Secret/rb-redfish-bridge-image-cache-key"]; s != nil {
				key, _, _ := unstructured.NestedString(s.Object, "data", "image-cache-key")
				got.KeySecret = len(key) > 0
				if n := len(key) * 3 / 4; n < 64 {
					t.Errorf("generated key: %d base64 characters, want 64 bytes", len(key))
				}
			}
			dep := objs["Deployment/rb-redfish-bridge"]
			volumes, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "volumes")
			mounts, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
			dirs := map[string]string{}
			for _, c := range mounts {
				ms, _, _ := unstructured.NestedSlice(c.(map[string]any), "volumeMounts")
				for _, m := range ms {
					dirs[m.(map[string]any)["name"].(string)] = m.(map[string]any)["mountPath"].(string)
				}
			}
			for _, v := range volumes {
				secret, _, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName")
				name := v.(map[string]any)["name"].(string)
				items, _, _ := unstructured.NestedSlice(v.(map[string]any), "secret", "items")
				if len(items) == 1 && dirs[name]+"/"+items[0].(map[string]any)["path"].(string) == keyFile &&
					items[0].(map[string]any)["key"] == "image-cache-key" {
					got.KeyVolume = secret
				}
			}
			cm := objs["ConfigMap/rb-redfish-bridge"]
			config, _, _ := unstructured.NestedString(cm.Object, "data", "config.yaml")
			for _, line := range strings.Split(config, "\n") {
				if v, ok := strings.CutPrefix(line, "image-cache-key-file: "); ok {
					got.KeyFile = v
				}
			}
			if job := objs["Job/rb-redfish-bridge-cache-prune"]; job != nil {
				got.HookPolicy = job.GetAnnotations()["helm.sh/hook-delete-policy"]
				if hook := job.GetAnnotations()["helm.sh/hook"]; hook != "pre-delete" {
					t.Errorf("Job hook %q, want pre-delete", hook)
				}
				containers, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "containers")
				args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
				got.HookArgs = strings.Join(args, " ")
				got.HookSA, _, _ = unstructured.NestedString(job.Object, "spec", "template", "spec", "serviceAccountName")
				image, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image")
				depContainers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
				if want := depContainers[0].(map[string]any)["image"]; image != want {
					t.Errorf("hook image %q, the bridge's %q", image, want)
				}
				labels, _, _ := unstructured.NestedStringMap(job.Object, "spec", "template", "metadata", "labels")
				sel, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "selector", "matchLabels")
				if labels["app.kubernetes.io/name"] == sel["app.kubernetes.io/name"] {
					t.Errorf("the hook's pod has the bridge's selector labels %v: its Service would send it requests", sel)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("helm template %v (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}
