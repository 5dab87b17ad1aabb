package sim

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/harness/vncscreen"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// virt-handler's screenshot endpoint, as virt-api's vnc/screenshot
// subresource GETs it (KubeVirt v1.9's LifecycleHandler
// ScreenshotRequestHandler): a plain GET on the console server, answered
// with the image's bytes and its MIME type. The simulated VM's screenshot
// is the PNG of the frame its RFB server shows ([vncscreen.Render] of the
// VM's name and boot state).

// screenshotMIME is the MIME type virt-launcher reports for QEMU's
// screendump in PNG format.
const screenshotMIME = "image/png"

// screenshotPattern is virt-handler's screenshot route as a ServeMux
// pattern (the console routes' {sub} wildcard matches one segment only).
func screenshotPattern() string {
	return "GET " + kubevirt.HandlerPath("{namespace}", "{name}", kubevirt.ScreenshotSubresource)
}

// serveScreenshot answers GET .../vnc/screenshot with the PNG of the
// running VMI's screen.
func (cs *consoleServer) serveScreenshot(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	vmi, status, err := cs.runningVMI(r, ns, name)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	screen := cs.screenFor(vmi)
	screen.SetState(BootState(vmi))
	var buf bytes.Buffer
	if err := png.Encode(&buf, vncscreen.Render(screen.Name(), screen.State())); err != nil {
		http.Error(w, fmt.Sprintf("screenshot of %s/%s: %v", ns, name, err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", screenshotMIME)
	_, _ = w.Write(buf.Bytes())
}

// runningVMI is VMI ns/name if it runs on NodeName; otherwise an error and
// the HTTP status virt-handler would answer with.
func (cs *consoleServer) runningVMI(r *http.Request, ns, name string) (*unstructured.Unstructured, int, error) {
	vmi, err := cs.dyn.Resource(VMIResource).Namespace(ns).Get(r.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, http.StatusNotFound, fmt.Errorf("VMI %s/%s not found", ns, name)
	}
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	node, _, _ := unstructured.NestedString(vmi.Object, "status", "nodeName")
	if node != NodeName || kubevirt.PhaseOf(vmi) != kubevirt.PhaseRunning {
		return nil, http.StatusBadRequest, fmt.Errorf("VMI %s/%s is not running on node %s", ns, name, NodeName)
	}
	return vmi, 0, nil
}
