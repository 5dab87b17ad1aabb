package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name, method, url, contentType string
		want                           KubeReq
	}{
		{"apply VM", http.MethodPatch, "/apis/kubevirt.io/v1/namespaces/ns/virtualmachines/vm-1?fieldManager=redfish-boot&force=true", "application/apply-patch+yaml", KubeReq{Verb: "APPLY", Resource: "virtualmachines"}},
		{"merge patch VM status", http.MethodPatch, "/apis/kubevirt.io/v1/namespaces/ns/virtualmachines/vm-1/status", "application/merge-patch+json", KubeReq{Verb: "PATCH", Resource: "virtualmachines/status"}},
		{"get VM", http.MethodGet, "/apis/kubevirt.io/v1/namespaces/ns/virtualmachines/vm-1", "", KubeReq{Verb: "GET", Resource: "virtualmachines"}},
		{"list VMs all namespaces", http.MethodGet, "/apis/kubevirt.io/v1/virtualmachines?limit=500", "", KubeReq{Verb: "LIST", Resource: "virtualmachines"}},
		{"watch pods", http.MethodGet, "/api/v1/namespaces/ns/pods?watch=true", "", KubeReq{Verb: "WATCH", Resource: "pods"}},
		{"create pod", http.MethodPost, "/api/v1/namespaces/ns/pods", "application/json", KubeReq{Verb: "CREATE", Resource: "pods"}},
		{"delete PVC", http.MethodDelete, "/api/v1/namespaces/ns/persistentvolumeclaims/boot", "", KubeReq{Verb: "DELETE", Resource: "persistentvolumeclaims"}},
		{"update configmap", http.MethodPut, "/api/v1/namespaces/ns/configmaps/x", "application/json", KubeReq{Verb: "UPDATE", Resource: "configmaps"}},
		{"get namespace", http.MethodGet, "/api/v1/namespaces/ns", "", KubeReq{Verb: "GET", Resource: "namespaces"}},
		{"list namespaces", http.MethodGet, "/api/v1/namespaces", "", KubeReq{Verb: "LIST", Resource: "namespaces"}},
		{"discovery", http.MethodGet, "/apis/kubevirt.io/v1", "", KubeReq{Verb: "GET", Resource: "(discovery)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), tc.method, tc.url, nil)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if diff := cmp.Diff(tc.want, Classify(req)); diff != "" {
				t.Errorf("Classify(%s %s) (-want +got):\n%s", tc.method, tc.url, diff)
			}
		})
	}
}

// TestCountingTransportSync checks that a request sent while an http.Server
// serves a request counts as sync, and one from a plain context does not.
func TestCountingTransportSync(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			w.WriteHeader(http.StatusConflict)
		}
	}))
	defer api.Close()
	k := NewKubeCounter()
	kubeClient := &http.Client{Transport: k.Wrap(http.DefaultTransport)}
	send := func(ctx context.Context, method string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, api.URL+"/apis/kubevirt.io/v1/namespaces/ns/virtualmachines/vm", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		resp, err := kubeClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	front := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		send(r.Context(), http.MethodPatch)
	}))
	defer front.Close()
	resp, err := http.Get(front.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	send(t.Context(), http.MethodGet)

	want := KubeCounts{
		{Sync: true, Verb: "APPLY", Resource: "virtualmachines"}: 1,
		{Sync: false, Verb: "GET", Resource: "virtualmachines"}:  1,
	}
	if diff := cmp.Diff(want, k.Snapshot()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int]int64{http.StatusConflict: 1}, k.Failed()); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	if got := k.IdleFor(); got > time.Minute {
		t.Errorf("IdleFor = %s right after a request", got)
	}
}

func TestKubeCountsSubSum(t *testing.T) {
	apply := KubeReq{Sync: true, Verb: "APPLY", Resource: "virtualmachines"}
	get := KubeReq{Verb: "GET", Resource: "virtualmachines"}
	pods := KubeReq{Verb: "CREATE", Resource: "pods"}
	d := KubeCounts{apply: 5, get: 2, pods: 1}.Sub(KubeCounts{apply: 3, get: 2})
	if diff := cmp.Diff(KubeCounts{apply: 2, pods: 1}, d); diff != "" {
		t.Errorf("Sub (-want +got):\n%s", diff)
	}
	if got := d.Sum(IsVMWrite); got != 2 {
		t.Errorf("VM writes = %d, want 2", got)
	}
}
