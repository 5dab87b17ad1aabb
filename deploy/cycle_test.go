package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/service"
)

// provisionCycle runs the bridge in-process as the chart's ServiceAccount,
// configured from the chart's ConfigMap, and drives Ironic's virtual-media
// boot over HTTP: insert the ISO, boot from CD once, power on; then a
// session login (which creates the sessions ConfigMap) and logout.
func provisionCycle(t *testing.T, env *installed) {
	ctx := t.Context()
	log, forbidden := watchForbidden(t)
	simulator, err := sim.New(env.cluster.Admin, sim.Options{Namespaces: []string{vmNS}, DataDir: t.TempDir(), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	simDone := make(chan error, 1)
	go func() { simDone <- simulator.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-simDone; err != nil {
			t.Errorf("simulator: %v", err)
		}
	}()

	adminDyn, err := dynamic.NewForConfig(env.cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adminDyn.Resource(kubevirt.VirtualMachines).Namespace(vmNS).Create(ctx, demo.SampleVM(vmNS, vmName), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	images, err := demo.StartImageServer([]string{"boot.iso"}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer images.Close()

	if got := env.configString(t, "namespaces"); got != vmNS {
		t.Fatalf("chart config namespaces = %q, want %q", got, vmNS)
	}
	bridge, err := service.Start(runCtx, service.Config{
		Kube:                 env.sa,
		Namespaces:           []string{vmNS},
		Namespace:            releaseNS,
		UsersSecret:          env.configString(t, "users-secret"),
		SessionKeySecret:     env.configString(t, "session-key-secret"),
		RevocationsConfigMap: env.configString(t, "sessions-configmap"),
		Listen:               "127.0.0.1:0",
		ServiceUUID:          env.configString(t, "service-uuid"),
		Version:              "chart-test",
		ImporterImage:        env.configString(t, "importer-image"),
		MetricsListen:        "127.0.0.1:0",
		Leader:               service.LeaderElection{LeaseName: env.configString(t, "lease-name"), Identity: "chart-test"},
		Events:               eventdelivery.Config{Secret: env.configString(t, "event-subscriptions-secret")},
		Log:                  log,
	})
	if err != nil {
		t.Fatalf("bridge as the chart's ServiceAccount: %v", err)
	}
	defer func() {
		stop()
		if err := bridge.Wait(); err != nil {
			t.Errorf("bridge: %v", err)
		}
	}()
	// The chart's probes: liveness /healthz, readiness /readyz.
	for _, path := range []string{"/healthz", "/readyz"} {
		waitHTTPOK(t, "http://"+bridge.MetricsAddr+path)
	}
	c := &client{base: "http://" + bridge.Addr}
	system := "/redfish/v1/Systems/" + vmNS + "." + vmName
	c.must(t, http.MethodPost, system+"/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": images.URL + "/images/boot.iso"})
	c.must(t, http.MethodPatch, system, map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}})
	c.must(t, http.MethodPost, system+"/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "On"})

	type state struct{ Power, Media string }
	want := state{Power: "On", Media: "Enabled/OK"}
	var got state
	deadline := time.Now().Add(90 * time.Second)
	for got != want {
		if time.Now().After(deadline) {
			t.Fatalf("after insert, boot Cd once, power on: %+v, want %+v", got, want)
		}
		time.Sleep(100 * time.Millisecond)
		var sys, cd struct {
			PowerState string
			Status     struct{ State, Health string }
		}
		c.get(t, system, &sys)
		c.get(t, system+"/VirtualMedia/cd0", &cd)
		got = state{Power: sys.PowerState, Media: cd.Status.State + "/" + cd.Status.Health}
	}
	checkImported(t, adminDyn, simulator, images)
	// The reconcilers ran as the leader: the Lease exists.
	if _, err := env.admin.CoordinationV1().Leases(releaseNS).Get(ctx, env.configString(t, "lease-name"), metav1.GetOptions{}); err != nil {
		t.Errorf("leader Lease: %v", err)
	}

	// Login records the session in the sessions ConfigMap (create), logout
	// revokes it there (patch).
	tok, loc := c.login(t)
	c.token = tok
	c.must(t, http.MethodDelete, loc, nil)
	if _, err := env.admin.CoreV1().ConfigMaps(releaseNS).Get(ctx, env.configString(t, "sessions-configmap"), metav1.GetOptions{}); err != nil {
		t.Errorf("sessions ConfigMap after login and logout: %v", err)
	}
	if seen := forbidden.seen(); len(seen) > 0 {
		t.Errorf("the bridge was refused %d call(s) under the chart's RBAC:\n%s", len(seen), strings.Join(seen, "\n"))
	}
}

// checkImported asserts the VM's CD-ROM volume is a PVC holding exactly the
// image served.
func checkImported(t *testing.T, dyn dynamic.Interface, simulator *sim.Simulator, images *demo.ImageServer) {
	t.Helper()
	vm, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(vmNS).Get(t.Context(), vmName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	volumes, _, _ := unstructured.NestedSlice(vm.Object, "spec", "template", "spec", "volumes")
	var claims []string
	for _, v := range volumes {
		if name, ok, _ := unstructured.NestedString(v.(map[string]any), "persistentVolumeClaim", "claimName"); ok {
			claims = append(claims, name)
		}
	}
	if len(claims) != 1 {
		t.Fatalf("VM volumes %v: want one PVC volume", volumes)
	}
	data, err := os.ReadFile(simulator.ImagePath(vmNS, claims[0]))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if diff := cmp.Diff(images.SHA256["boot.iso"], hex.EncodeToString(sum[:])); diff != "" {
		t.Errorf("imported image checksum (-served +imported):\n%s", diff)
	}
}
