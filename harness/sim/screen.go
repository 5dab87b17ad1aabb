package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/harness/vncscreen"
)

// The simulated screen of a running VMI (what QEMU's VNC server is to
// virt-handler): a real RFB 3.8 server (package vncscreen) showing the
// VM's name and its boot state ([BootState]) and recording the keys it
// receives, served on the console server's vnc route, which virt-api's
// real vnc subresource dials.

// serveVNC is the vnc route: the VMI's screen, over RFB, on conn.
func (cs *consoleServer) serveVNC(ctx context.Context, vmi *unstructured.Unstructured, conn io.ReadWriter) error {
	screen := cs.screenFor(vmi)
	screen.SetState(BootState(vmi))
	rwc, ok := conn.(io.ReadWriteCloser)
	if !ok {
		return errors.New("sim: vnc connection cannot be closed")
	}
	return screen.Serve(ctx, rwc)
}

// Close closes the WebSocket (a screen's server ends its connection).
func (s *wsStream) Close() error { return s.conn.Close() }

// screenFor is the VMI's screen, made on first use.
func (cs *consoleServer) screenFor(vmi *unstructured.Unstructured) *vncscreen.Screen {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	sc, ok := cs.screen[vmi.GetUID()]
	if !ok {
		sc = vncscreen.New(vmi.GetName(), BootState(vmi))
		cs.screen[vmi.GetUID()] = sc
	}
	return sc
}

// Screen is the screen of the running VMI namespace/name (the same one
// every VNC connection to it shows), for a test to ask which keys the VM
// received. It fails without a console server (no virt-api) or a VMI.
func (s *Simulator) Screen(namespace, name string) (*vncscreen.Screen, error) {
	s.mu.Lock()
	cs := s.console
	s.mu.Unlock()
	if cs == nil {
		return nil, errors.New("sim: no console server (the cluster runs no virt-api)")
	}
	vmi := s.getU(namespace+"/"+name, vmiInformer)
	if vmi == nil {
		return nil, fmt.Errorf("sim: no VMI %s/%s", namespace, name)
	}
	return cs.screenFor(vmi), nil
}

// BootState is what a VMI's screen shows under its name: the device it
// boots from, the disk with the lowest bootOrder (the first disk without
// one), as SeaBIOS prints it.
func BootState(vmi *unstructured.Unstructured) string {
	disks, _, _ := unstructured.NestedSlice(vmi.Object, "spec", "domain", "devices", "disks")
	best, order := map[string]any(nil), int64(math.MaxInt64)
	for _, d := range disks {
		disk, _ := d.(map[string]any)
		o, found, _ := unstructured.NestedInt64(disk, "bootOrder")
		if !found {
			o = math.MaxInt64 - 1
		}
		if best == nil || o < order {
			best, order = disk, o
		}
	}
	if best == nil {
		return "No bootable device."
	}
	name, _ := best["name"].(string)
	if _, cd := best["cdrom"]; cd {
		return "Booting from DVD/CD (" + name + ")..."
	}
	return "Booting from Hard Disk (" + name + ")..."
}
