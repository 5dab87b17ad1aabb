package sim_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/draw"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/vncscreen"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
	"github.com/redfish-bridge/redfish-bridge/thumbnail"
	"github.com/redfish-bridge/redfish-bridge/virtapi"
)

// testScreen: virt-api's real vnc subresource reaches the VMI's simulated
// screen: an RFB client reads a framebuffer showing the VM's name and boot
// state pixel for pixel, and a key it types is recorded by the VM.
func (e *env) testScreen(t *testing.T, c *testcluster.Cluster) {
	e.createVM(t, newVM(e.ns, "screen", "Always"))
	e.vmiIs(t, "screen", "Running", "")
	ws := dialVNC(t, c.Admin, e.ns, "screen")
	client, err := vncscreen.Dial(vncscreen.NewWebSocketStream(ws), nil)
	if err != nil {
		t.Fatalf("RFB through virt-api: %v", err)
	}
	if client.Name != "screen" {
		t.Errorf("desktop name %q, want the VM's", client.Name)
	}
	frame, err := client.Frame(false)
	if err != nil {
		t.Fatal(err)
	}
	screen, err := e.sim.Screen(e.ns, "screen")
	if err != nil {
		t.Fatal(err)
	}
	if want := vncscreen.Render("screen", screen.State()); string(frame.Pix) != string(want.Pix) {
		t.Errorf("the framebuffer read through virt-api is not the VM's screen (%q)", screen.State())
	}
	if !strings.HasPrefix(screen.State(), "Booting from Hard Disk (") {
		t.Errorf("boot state %q, want the disk it boots from", screen.State())
	}
	if err := client.Key('q'); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), consoleGuard)
	defer cancel()
	if err := screen.WaitKey(ctx, 'q'); err != nil {
		t.Errorf("the VM did not record the key typed: %v", err)
	}
	client.Close()

	// The bridge's own dialer (virtapi.Screens, client-go's WebSocket
	// transport) reaches the same screen.
	screens, err := virtapi.NewScreens(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := screens.OpenScreen(ctx, system.Key{Namespace: e.ns, Name: "screen"})
	if err != nil {
		t.Fatalf("virtapi.Screens: %v", err)
	}
	bridge, err := vncscreen.Dial(stream, nil)
	if err != nil {
		t.Fatalf("RFB through virtapi.Screens: %v", err)
	}
	defer bridge.Close()
	if frame, err := bridge.Frame(false); err != nil || string(frame.Pix) != string(vncscreen.Render("screen", screen.State()).Pix) {
		t.Errorf("the frame through virtapi.Screens is not the VM's screen (err %v)", err)
	}
	if err := bridge.Key('w'); err != nil {
		t.Fatal(err)
	}
	if err := screen.WaitKey(ctx, 'w'); err != nil {
		t.Errorf("the VM did not record the key typed through virtapi.Screens: %v", err)
	}
}

// dialVNC opens VMI ns/name's vnc subresource through kube-apiserver.
func dialVNC(t *testing.T, cfg *rest.Config, ns, name string) *websocket.Conn {
	t.Helper()
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := websocket.Dialer{TLSClientConfig: tc, Subprotocols: []string{kubevirt.PlainStreamProtocol}, HandshakeTimeout: consoleGuard}
	url := "wss://" + strings.TrimPrefix(cfg.Host, "https://") + kubevirt.VMISubresourcePath(ns, name, kubevirt.VNCSubresource)
	conn, resp, err := d.DialContext(t.Context(), url, http.Header{"Authorization": {"Bearer " + cfg.BearerToken}})
	if resp != nil && resp.Body != nil {
		defer resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("open the screen of %s/%s: %v (%v)", ns, name, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// testScreenshot: virt-api's real vnc/screenshot subresource reaches the
// simulated virt-handler's screenshot endpoint: the PNG, fetched by the
// bridge's thumbnails (thumbnail.Cache over virtapi.Client.Screenshot),
// decodes to the frame the VM's RFB server shows, its name in the pixels;
// a VM with no VMI is thumbnail.ErrNotRunning (virt-api's NotFound).
func (e *env) testScreenshot(t *testing.T, c *testcluster.Cluster) {
	e.createVM(t, newVM(e.ns, "shot", "Always"))
	e.vmiIs(t, "shot", "Running", "")
	client, err := virtapi.New(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	// The bridge's thumbnails (package thumbnail over virtapi.Client, what
	// the Systems page's Thumbnail route serves).
	thumbs := thumbnail.New(client)
	raw, err := thumbs.Thumbnail(t.Context(), system.Key{Namespace: e.ns, Name: "shot"})
	if err != nil {
		t.Fatalf("screenshot through virt-api: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	screen, err := e.sim.Screen(e.ns, "shot")
	if err != nil {
		t.Fatal(err)
	}
	want := vncscreen.Render("shot", screen.State())
	if img.Bounds() != want.Bounds() {
		t.Fatalf("screenshot is %v, want the screen's %v", img.Bounds(), want.Bounds())
	}
	got := image.NewRGBA(img.Bounds())
	draw.Draw(got, got.Bounds(), img, image.Point{}, draw.Src)
	if string(got.Pix) != string(want.Pix) {
		t.Errorf("the screenshot through virt-api is not the VM's screen (%q)", screen.State())
	}

	_, err = thumbs.Thumbnail(t.Context(), system.Key{Namespace: e.ns, Name: "no-such-vm"})
	if !errors.Is(err, thumbnail.ErrNotRunning) {
		t.Errorf("a VM with no VMI: %v, want thumbnail.ErrNotRunning", err)
	}
}
