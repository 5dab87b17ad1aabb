package virtapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestPutConflicts: virt-api's 500 for a JSON patch that no longer applied
// (the VM's stateChangeRequests changed between its read and its patch:
// virt-controller had just consumed a Start; seen as a testcluster
// TestVirtAPI failure on a loaded machine) is a conflict like its 409; any
// other 500 stays an error.
func TestPutConflicts(t *testing.T) {
	for _, tc := range []struct {
		name         string
		status       int
		body         string
		wantConflict bool
	}{
		{"patch test no longer applies", 500, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: the server rejected our request due to an error in our request","reason":"InternalError","details":{"causes":[{"message":"the server rejected our request due to an error in our request"}]},"code":500}`, true},
		{"virt-api's own 409", 409, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on virtualmachine.kubevirt.io \"vm\": VM is not running","reason":"Conflict","code":409}`, true},
		{"another internal error", 500, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: etcdserver: request timed out","reason":"InternalError","code":500}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := answering(t, http.MethodPut, tc.status, tc.body)
			err := c.ForceStop(t.Context(), "ns", "vm")
			if err == nil {
				t.Fatal("ForceStop succeeded, want an error")
			}
			if got := apierrors.IsConflict(err); got != tc.wantConflict {
				t.Errorf("IsConflict(%v) = %v, want %v", err, got, tc.wantConflict)
			}
		})
	}
}

// TestScreenshotRefused: virt-api's bare 401 (its own SubjectAccessReview
// denied the bridge's identity vnc/screenshot, while kube-apiserver had
// allowed vnc) and kube-apiserver's 403 say which grants the screenshot
// needs, stay Unauthorized and Forbidden, and are not ErrNoScreen.
func TestScreenshotRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		is     func(error) bool
	}{
		{"virt-api's 401", 401, "Unauthorized", apierrors.IsUnauthorized},
		{"kube-apiserver's 403", 403, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden","reason":"Forbidden","code":403}`, apierrors.IsForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := answering(t, http.MethodGet, tc.status, tc.body)
			_, err := c.Screenshot(t.Context(), system.Key{Namespace: "ns", Name: "vm"})
			if err == nil || !tc.is(err) || errors.Is(err, ErrNoScreen) {
				t.Fatalf("Screenshot: %v, want %s and not ErrNoScreen", err, tc.name)
			}
			if !strings.Contains(err.Error(), "virtualmachineinstances/vnc/screenshot") {
				t.Errorf("Screenshot: %v, want it to name the grant virtualmachineinstances/vnc/screenshot", err)
			}
		})
	}
}

// answering is a Client of a server that answers every request, which
// must use method, with status and body.
func answering(t *testing.T, method string, status int, body string) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			t.Errorf("%s %s, want only %s", r.Method, r.URL, method)
		}
		if strings.HasPrefix(body, "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c, err := New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
