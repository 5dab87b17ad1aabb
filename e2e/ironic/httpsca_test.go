package ironic

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/media"
)

// imageCAs are the private CAs of Ironic 39's HTTPS image servers: trusted
// signs the certificate of its http_root served over HTTPS, and is in the
// bridge's CA bundle; untrusted signs another server's, which Ironic
// trusts and the bridge does not. Ironic trusts both (webserver_verify_ca).
type imageCAs struct {
	trusted, untrusted *testca.CA
	serverTLS          *tls.Config // trusted's certificate for 127.0.0.1
}

func newImageCAs() (imageCAs, error) {
	var c imageCAs
	var err error
	if c.trusted, err = testca.New("ironic image CA"); err != nil {
		return c, err
	}
	if c.untrusted, err = testca.New("another image CA"); err != nil {
		return c, err
	}
	c.serverTLS, err = c.trusted.ServerTLS()
	return c, err
}

// withImageCAs adds the HTTPS image server and Ironic's trust of both CAs
// to the options of Ironic 39 (21.4 keeps plain HTTP only).
func (s *suite) withImageCAs(o ironicproc.Options) ironicproc.Options {
	if s.is39() {
		o.ImageTLS = s.cas.serverTLS
		o.WebserverCAs = s.cas.trusted.PEM + s.cas.untrusted.PEM
	}
	return o
}

// trustInBridge puts the trusted CA in env's bridge-wide CA bundle, the
// way an operator does: a ConfigMap in the bridge's namespace, named by
// --image-ca-configmap, key ca.crt.
func (c imageCAs) trustInBridge(env *demo.Env) error {
	kube, err := kubernetes.NewForConfig(env.Cluster.Admin)
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	ctx, cancel := contextFor()
	defer cancel()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: demo.ImageCAConfigMap},
		Data:       map[string]string{media.DefaultCABundleKey: c.trusted.PEM},
	}
	if _, err := kube.CoreV1().ConfigMaps(env.Cluster.BridgeNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the bridge's CA bundle: %w", err)
	}
	return nil
}

// httpsCADeployScenario (Ironic 39): a ramdisk deploy whose instance ISO
// comes from Ironic's http_root over HTTPS, its certificate from a private
// CA that Ironic trusts (webserver_verify_ca) and the bridge's CA bundle
// holds: Ironic inserts it with TransferProtocolType HTTPS, the bridge's
// import trusts the CA, the VM boots the CD and the node reaches active;
// undeploy ejects and powers off.
func httpsCADeployScenario(t *testing.T, s *suite, v crds.Variant) {
	image := s.ironic.HTTPSURL + "/" + bootISO
	n := s.enroll(t, v, vmHTTPSCA, "ramdisk", map[string]any{"vmedia_transport_protocol": "HTTPS"})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "provide", func() { n.provision(t, "provide", "available", nil) })
	n.step(t, "deploy to active from the HTTPS image server", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "add", "path": "/instance_info/boot_iso", "value": image}); err != nil {
			t.Fatalf("set instance_info/boot_iso: %v", err)
		}
		if err := s.api.Provision(t.Context(), n.uuid, "active", nil); err != nil {
			t.Fatalf("deploy: %v", err)
		}
		got := n.wait(t, "active", func(x ironicproc.Node) bool {
			return str(x.Reservation) == "" && str(x.TargetPowerState) == "" &&
				((x.ProvisionState == "active" && str(x.TargetProvisionState) == "") || strings.HasSuffix(x.ProvisionState, "failed"))
		})
		if got.ProvisionState != "active" {
			// Ironic 39 empties last_error in its clean-up: the reason is
			// in the node's history.
			t.Fatalf("deploy from the HTTPS image server: %s; history: %s", got.Summary(), n.historyErrors(t))
		}
		if str(got.PowerState) != "power on" || str(got.LastError) != "" {
			t.Errorf("active node: %s", got.Summary())
		}
		n.bootedCD(t, image, "")
		checkSystemMedia39(t, n)
		n.insertedHTTPS(t, image)
	})
	n.step(t, "undeploy", func() {
		n.provision(t, "deleted", "available", nil)
		n.poweredOffEjected(t)
	})
	n.checkFields(t)
}

// insertedHTTPS checks that Ironic's last InsertMedia to the node's cd0
// named image with TransferProtocolType HTTPS.
func (n *node) insertedHTTPS(t *testing.T, image string) {
	t.Helper()
	ins := n.rec.matching(http.MethodPost, "/Systems/"+n.key.ID()+"/VirtualMedia/"+media.DefaultSlot+"/Actions/VirtualMedia.InsertMedia", "")
	if len(ins) == 0 {
		t.Fatal("Ironic sent no InsertMedia to cd0")
	}
	last := ins[len(ins)-1]
	body := strings.ReplaceAll(last.reqBody, " ", "")
	if !strings.Contains(body, `"TransferProtocolType":"HTTPS"`) || !strings.Contains(body, `"Image":"`+image+`"`) {
		t.Errorf("Ironic's InsertMedia %s, want Image %s with TransferProtocolType HTTPS", last.reqBody, image)
	}
	t.Logf("Ironic's InsertMedia: %s", last.reqBody)
}
