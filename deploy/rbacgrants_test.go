package deploy

import (
	"context"
	"fmt"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
	"github.com/redfish-bridge/redfish-bridge/virtapi"
)

// everySystem is a console.Systems in which every System exists.
type everySystem struct{}

func (everySystem) Labels(context.Context, system.Key) (map[string]string, bool) { return nil, true }

// grant is one verb on one resource in one namespace ("": cluster-wide),
// as an RBAC rule grants it.
type grant struct{ group, resource, verb, namespace string }

func (g grant) String() string {
	return fmt.Sprintf("%s/%s %s in %q", g.group, g.resource, g.verb, g.namespace)
}

// probe is the API call the bridge makes with a grant, made as the
// chart's ServiceAccount (writes are dry-run).
type probe func(ctx context.Context) error

// probes maps every grant the chart may give to the call that needs it;
// the comment names the code making that call. A grant the chart gives
// that is missing here fails the test: nothing would need it.
func probes(env *installed, kube kubernetes.Interface, dyn dynamic.Interface, t *testing.T) map[grant]probe {
	usersSecret := env.configString(t, "users-secret")
	keySecret := env.configString(t, "session-key-secret")
	sessions := env.configString(t, "sessions-configmap")
	events := env.configString(t, "event-subscriptions-secret")
	lease := env.configString(t, "lease-name")
	imageCA := env.configString(t, "image-ca-configmap")
	dryRun := []string{metav1.DryRunAll}
	byName := func(name string) metav1.ListOptions {
		return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	}
	vms := dyn.Resource(kubevirt.VirtualMachines).Namespace(vmNS)
	vmis := dyn.Resource(kubevirt.VirtualMachineInstances).Namespace(vmNS)
	dvs := dyn.Resource(media.DataVolumeResource).Namespace(vmNS)
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	pods, pvcs := kube.CoreV1().Pods(vmNS), kube.CoreV1().PersistentVolumeClaims(vmNS)
	secrets, cms := kube.CoreV1().Secrets(releaseNS), kube.CoreV1().ConfigMaps(releaseNS)
	consoles, err := console.New(env.sa, everySystem{}, console.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	screens, err := virtapi.NewScreens(env.sa)
	if err != nil {
		t.Fatal(err)
	}
	forcer, err := virtapi.New(env.sa)
	if err != nil {
		t.Fatal(err)
	}
	vmSecrets, vmCMs := kube.CoreV1().Secrets(vmNS), kube.CoreV1().ConfigMaps(vmNS)
	trustLabels := metav1.ListOptions{LabelSelector: media.LabelComponent + "=" + media.ComponentTrust + "," + media.LabelPartOf + "=" + media.PartOf}
	leases := kube.CoordinationV1().Leases(releaseNS)
	return map[grant]probe{
		// apply.DetectMode.
		{"apiextensions.k8s.io", "customresourcedefinitions", "get", ""}: func(ctx context.Context) error {
			_, err := crds.Get(ctx, kubevirt.CRDName, metav1.GetOptions{})
			return err
		},
		// apply.Client reads (precondition), inventory informers, SSA.
		{"kubevirt.io", "virtualmachines", "get", vmNS}: func(ctx context.Context) error {
			_, err := vms.Get(ctx, vmName, metav1.GetOptions{})
			return err
		},
		{"kubevirt.io", "virtualmachines", "list", vmNS}:  func(ctx context.Context) error { _, err := vms.List(ctx, metav1.ListOptions{}); return err },
		{"kubevirt.io", "virtualmachines", "watch", vmNS}: func(ctx context.Context) error { return stopWatch(vms.Watch(ctx, metav1.ListOptions{})) },
		{"kubevirt.io", "virtualmachines", "patch", vmNS}: func(ctx context.Context) error {
			body := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
				"metadata": map[string]any{"name": vmName, "namespace": vmNS},
			}}
			_, err := vms.Apply(ctx, vmName, body, metav1.ApplyOptions{FieldManager: "rbac-probe", DryRun: dryRun})
			return err
		},
		// power: start/stop/restart requests, apply.Client.StateChange.
		{"kubevirt.io", "virtualmachines/status", "patch", vmNS}: func(ctx context.Context) error {
			body := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
				"metadata": map[string]any{"name": vmName, "namespace": vmNS},
			}}
			_, err := vms.Apply(ctx, vmName, body, metav1.ApplyOptions{FieldManager: "rbac-probe", DryRun: dryRun}, "status")
			return err
		},
		// power's ForceOff and ForceRestart: virt-api's stop and restart
		// (virtapi.Client; no virt-api here: an allowed call is 404).
		{"subresources.kubevirt.io", "virtualmachines/stop", "update", vmNS}: func(ctx context.Context) error {
			return forcer.ForceStop(ctx, vmNS, vmName)
		},
		{"subresources.kubevirt.io", "virtualmachines/restart", "update", vmNS}: func(ctx context.Context) error {
			return forcer.ForceRestart(ctx, vmNS, vmName)
		},
		// The serial console (console.Opener; no virt-api here: an allowed
		// call is 404, console.ErrNotRunning).
		{"subresources.kubevirt.io", "virtualmachineinstances/console", "get", vmNS}: func(ctx context.Context) error {
			st, err := consoles.Open(ctx, console.User{Name: "probe", Scope: auth.Scope{Namespaces: []string{auth.AllNamespaces}}}, system.Key{Namespace: vmNS, Name: vmName})
			if err == nil {
				_ = st.Close()
			}
			return err
		},
		// The graphical console (vncconsole through virtapi.Screens; no
		// virt-api here: an allowed call is 404).
		{"subresources.kubevirt.io", "virtualmachineinstances/vnc", "get", vmNS}: func(ctx context.Context) error {
			screen, err := screens.OpenScreen(ctx, system.Key{Namespace: vmNS, Name: vmName})
			if err == nil {
				_ = screen.Close()
			}
			return err
		},
		// The thumbnails (thumbnail.Cache through virtapi.Client.Screenshot).
		// kube-apiserver authorizes them as vnc (the subresource is the
		// path's first segment after the name), which the same rule
		// grants; virt-api then asks for vnc/screenshot itself, which only
		// a cluster with virt-api checks: e2e.TestWebUI's thumbnail (401
		// without it).
		{"subresources.kubevirt.io", "virtualmachineinstances/vnc/screenshot", "get", vmNS}: func(ctx context.Context) error {
			_, err := forcer.Screenshot(ctx, system.Key{Namespace: vmNS, Name: vmName})
			return err
		},
		// apply.Client reads the VMI, inventory watches it.
		{"kubevirt.io", "virtualmachineinstances", "get", vmNS}: func(ctx context.Context) error {
			_, err := vmis.Get(ctx, vmName, metav1.GetOptions{})
			return err
		},
		{"kubevirt.io", "virtualmachineinstances", "list", vmNS}:  func(ctx context.Context) error { _, err := vmis.List(ctx, metav1.ListOptions{}); return err },
		{"kubevirt.io", "virtualmachineinstances", "watch", vmNS}: func(ctx context.Context) error { return stopWatch(vmis.Watch(ctx, metav1.ListOptions{})) },
		// media: import pods and image PVCs (create, informers, cleanup; the
		// pod is looked up before a re-create, media/reconcile.go).
		{"", "pods", "create", vmNS}: func(ctx context.Context) error {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: vmNS},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "probe"}}},
			}
			_, err := pods.Create(ctx, pod, metav1.CreateOptions{DryRun: dryRun})
			return err
		},
		{"", "pods", "get", vmNS}: func(ctx context.Context) error {
			_, err := pods.Get(ctx, "absent", metav1.GetOptions{})
			return err
		},
		{"", "pods", "list", vmNS}:  func(ctx context.Context) error { _, err := pods.List(ctx, metav1.ListOptions{}); return err },
		{"", "pods", "watch", vmNS}: func(ctx context.Context) error { return stopWatch(pods.Watch(ctx, metav1.ListOptions{})) },
		{"", "pods", "delete", vmNS}: func(ctx context.Context) error {
			return pods.Delete(ctx, "absent", metav1.DeleteOptions{DryRun: dryRun})
		},
		// media/podimport/progress.go: a running import pod's progress lines.
		{"", "pods/log", "get", vmNS}: func(ctx context.Context) error {
			_, err := pods.GetLogs("absent", &corev1.PodLogOptions{}).DoRaw(ctx)
			return err
		},
		{"", "persistentvolumeclaims", "create", vmNS}: func(ctx context.Context) error {
			pvc := &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: vmNS},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}
			_, err := pvcs.Create(ctx, pvc, metav1.CreateOptions{DryRun: dryRun})
			return err
		},
		{"", "persistentvolumeclaims", "list", vmNS}:  func(ctx context.Context) error { _, err := pvcs.List(ctx, metav1.ListOptions{}); return err },
		{"", "persistentvolumeclaims", "watch", vmNS}: func(ctx context.Context) error { return stopWatch(pvcs.Watch(ctx, metav1.ListOptions{})) },
		{"", "persistentvolumeclaims", "delete", vmNS}: func(ctx context.Context) error {
			return pvcs.Delete(ctx, "absent", metav1.DeleteOptions{DryRun: dryRun})
		},
		// media: the import Secret of an insert (media/importsecret.go),
		// created and deleted by name, never read.
		{"", "secrets", "create", vmNS}: func(ctx context.Context) error {
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: vmNS}}
			_, err := vmSecrets.Create(ctx, sec, metav1.CreateOptions{DryRun: dryRun})
			return err
		},
		{"", "secrets", "delete", vmNS}: func(ctx context.Context) error {
			return vmSecrets.Delete(ctx, "absent", metav1.DeleteOptions{DryRun: dryRun})
		},
		// media: the import ConfigMap of an insert (media/importsecret.go).
		{"", "configmaps", "delete", vmNS}: func(ctx context.Context) error {
			return vmCMs.Delete(ctx, "absent", metav1.DeleteOptions{DryRun: dryRun})
		},
		// media: CDI DataVolumes (media/cdiimport/importcdi.go): created, watched, looked
		// up before a re-create, deleted with their insert.
		{"cdi.kubevirt.io", "datavolumes", "create", vmNS}: func(ctx context.Context) error {
			dv := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
				"metadata": map[string]any{"name": "rbac-probe", "namespace": vmNS},
				"spec":     map[string]any{"source": map[string]any{"http": map[string]any{"url": "http://image.example/x.iso"}}},
			}}
			_, err := dvs.Create(ctx, dv, metav1.CreateOptions{DryRun: dryRun})
			return err
		},
		{"cdi.kubevirt.io", "datavolumes", "get", vmNS}: func(ctx context.Context) error {
			_, err := dvs.Get(ctx, "absent", metav1.GetOptions{})
			return err
		},
		{"cdi.kubevirt.io", "datavolumes", "list", vmNS}:  func(ctx context.Context) error { _, err := dvs.List(ctx, metav1.ListOptions{}); return err },
		{"cdi.kubevirt.io", "datavolumes", "watch", vmNS}: func(ctx context.Context) error { return stopWatch(dvs.Watch(ctx, metav1.ListOptions{})) },
		{"cdi.kubevirt.io", "datavolumes", "delete", vmNS}: func(ctx context.Context) error {
			return dvs.Delete(ctx, "absent", metav1.DeleteOptions{DryRun: dryRun})
		},
		// media: a slot's trust ConfigMap (media/trust.go), cached by label
		// (media/trustcache.go).
		{"", "configmaps", "get", vmNS}: func(ctx context.Context) error {
			_, err := vmCMs.Get(ctx, "absent", metav1.GetOptions{})
			return err
		},
		{"", "configmaps", "list", vmNS}: func(ctx context.Context) error {
			_, err := vmCMs.List(ctx, trustLabels)
			return err
		},
		{"", "configmaps", "watch", vmNS}: func(ctx context.Context) error { return stopWatch(vmCMs.Watch(ctx, trustLabels)) },
		{"", "configmaps", "create", vmNS}: func(ctx context.Context) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: vmNS}}
			_, err := vmCMs.Create(ctx, cm, metav1.CreateOptions{DryRun: dryRun})
			return err
		},
		{"", "configmaps", "update", vmNS}: func(ctx context.Context) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "absent", Namespace: vmNS}}
			_, err := vmCMs.Update(ctx, cm, metav1.UpdateOptions{DryRun: dryRun})
			return err
		},
		// media heal events.
		{"", "events", "create", vmNS}: func(ctx context.Context) error {
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "rbac-probe", Namespace: vmNS},
				InvolvedObject: corev1.ObjectReference{Kind: "VirtualMachine", APIVersion: "kubevirt.io/v1", Namespace: vmNS, Name: vmName},
				Reason:         "Probe", Message: "rbac probe", Type: corev1.EventTypeNormal,
			}
			_, err := kube.CoreV1().Events(vmNS).Create(ctx, ev, metav1.CreateOptions{DryRun: dryRun})
			return err
		},
		// kubeauth.SessionKey reads the key; kubeauth.WatchSecretUsers watches the users.
		{"", "secrets", "get", releaseNS}: func(ctx context.Context) error {
			_, err := secrets.Get(ctx, keySecret, metav1.GetOptions{})
			return err
		},
		{"", "secrets", "list", releaseNS}:  func(ctx context.Context) error { _, err := secrets.List(ctx, byName(usersSecret)); return err },
		{"", "secrets", "watch", releaseNS}: func(ctx context.Context) error { return stopWatch(secrets.Watch(ctx, byName(usersSecret))) },
		// eventsub.Store: the subscriptions' Secret updated under its
		// resourceVersion, created by the first subscription (eventsub.Watch
		// lists and watches it by name, as the users above).
		{"", "secrets", "update", releaseNS}: func(ctx context.Context) error {
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: events, Namespace: releaseNS}}
			_, err := secrets.Update(ctx, sec, metav1.UpdateOptions{DryRun: dryRun})
			return err
		},
		{"", "secrets", "create", releaseNS}: func(ctx context.Context) error {
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: events, Namespace: releaseNS}}
			_, err := secrets.Create(ctx, sec, metav1.CreateOptions{DryRun: dryRun})
			return err
		},
		// kubeauth.ConfigMapRevocations: informer, Revoke's patch, first create.
		{"", "configmaps", "list", releaseNS}:  func(ctx context.Context) error { _, err := cms.List(ctx, byName(sessions)); return err },
		{"", "configmaps", "watch", releaseNS}: func(ctx context.Context) error { return stopWatch(cms.Watch(ctx, byName(sessions))) },
		{"", "configmaps", "patch", releaseNS}: func(ctx context.Context) error {
			_, err := cms.Patch(ctx, sessions, types.MergePatchType, []byte(`{"data":{"probe":"x"}}`), metav1.PatchOptions{DryRun: dryRun})
			return err
		},
		{"", "configmaps", "create", releaseNS}: func(ctx context.Context) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: sessions, Namespace: releaseNS}}
			_, err := cms.Create(ctx, cm, metav1.CreateOptions{DryRun: dryRun})
			return err
		},
		// media: the bridge-wide CA bundle, read at each insert (media/importsecret.go).
		{"", "configmaps", "get", releaseNS}: func(ctx context.Context) error {
			_, err := cms.Get(ctx, imageCA, metav1.GetOptions{})
			return err
		},
		// Leader election (client-go resourcelock.LeaseLock: get, create, update).
		{"coordination.k8s.io", "leases", "get", releaseNS}: func(ctx context.Context) error { _, err := leases.Get(ctx, lease, metav1.GetOptions{}); return err },
		{"coordination.k8s.io", "leases", "create", releaseNS}: func(ctx context.Context) error {
			_, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: lease}}, metav1.CreateOptions{DryRun: dryRun})
			return err
		},
		{"coordination.k8s.io", "leases", "update", releaseNS}: func(ctx context.Context) error {
			_, err := leases.Update(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: lease, Namespace: releaseNS}}, metav1.UpdateOptions{DryRun: dryRun})
			return err
		},
	}
}

func stopWatch(w watch.Interface, err error) error {
	if err == nil {
		w.Stop()
	}
	return err
}
