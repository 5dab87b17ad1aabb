package backend_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestForgedTrustIgnored is issue 37's attack 4: a namespace user who can
// read the VM (its UID) and write ConfigMaps plants or edits a slot's
// trust ConfigMap with everything a reader can copy (the bridge's labels,
// an owner reference with the VM's real UID, even a MAC the bridge wrote
// for another VM) to turn VerifyCertificate off. The slot keeps
// VerifyCertificate true for the Redfish GET and for the insert's import,
// and lists none of the planted certificates. The bridge's own writes are
// still honoured: a PATCH over the planted object re-signs it, and the
// GET then shows the PATCH's value.
func TestForgedTrustIgnored(t *testing.T) {
	s := newStack(t, crds.Stock, nil)
	ctx := t.Context()
	vms := s.admin.Resource(kubevirt.VirtualMachines).Namespace(stackNS)
	cms := s.adminKube.CoreV1().ConfigMaps(stackNS)
	newVM := func(t *testing.T, name string) (system.Key, *corev1.ConfigMap) {
		t.Helper()
		vm, err := vms.Create(ctx, demo.SampleVM(stackNS, name), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		key := system.Key{Namespace: stackNS, Name: name}
		return key, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: media.TrustConfigMapName(key, media.DefaultSlot), Namespace: stackNS,
				Labels: map[string]string{media.LabelComponent: media.ComponentTrust, media.LabelPartOf: media.PartOf, media.LabelSlot: media.DefaultSlot},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: kubevirt.APIVersion, Kind: kubevirt.Kind, Name: name, UID: vm.GetUID(),
				}},
			},
		}
	}
	slotURI := func(key system.Key) string {
		return "/redfish/v1/Systems/" + key.ID() + "/VirtualMedia/" + media.DefaultSlot
	}
	// The bridge signs this VM's slot: verify off, one certificate. Its
	// data and MAC are what a reader copies.
	donor, _ := newVM(t, "donor")
	if rec := s.do(t, http.MethodPatch, slotURI(donor), `{"VerifyCertificate": false}`, ""); rec.Code != http.StatusOK && rec.Code != http.StatusNoContent {
		t.Fatalf("PATCH donor: %d %s", rec.Code, rec.Body)
	}
	signed, err := cms.Get(ctx, media.TrustConfigMapName(donor, media.DefaultSlot), metav1.GetOptions{})
	if err != nil || signed.Annotations[objmac.Annotation] == "" {
		t.Fatalf("the bridge's trust ConfigMap %v has no MAC (%v)", signed, err)
	}
	planted := certPEM(t, "planted", 0)
	for i, tc := range []struct {
		name  string
		plant func(cm *corev1.ConfigMap)
	}{
		{"bridge labels and the VM's real UID", func(cm *corev1.ConfigMap) {
			cm.Data = map[string]string{"verifyCertificate": "false", "certificate-1": planted}
		}},
		{"the MAC of another VM's slot copied", func(cm *corev1.ConfigMap) {
			cm.Data = maps.Clone(signed.Data)
			cm.Annotations = map[string]string{objmac.Annotation: signed.Annotations[objmac.Annotation]}
		}},
		{"a made-up MAC", func(cm *corev1.ConfigMap) {
			cm.Data = map[string]string{"verifyCertificate": "false"}
			cm.Annotations = map[string]string{objmac.Annotation: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, cm := newVM(t, fmt.Sprintf("forged-%d", i))
			tc.plant(cm)
			if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			// The bridge's own trust write returns once its cache shows it,
			// so the cache has seen the planted one (one watch, in order).
			if rec := s.do(t, http.MethodPatch, slotURI(donor), `{"VerifyCertificate": false}`, ""); rec.Code != http.StatusOK && rec.Code != http.StatusNoContent {
				t.Fatalf("PATCH donor: %d %s", rec.Code, rec.Body)
			}
			if got := verifyCertificate(t, s, slotURI(key)); !got {
				t.Errorf("GET %s: VerifyCertificate false, taken from the planted ConfigMap", slotURI(key))
			}
			if rec := s.do(t, http.MethodGet, slotURI(key)+"/Certificates", "", ""); rec.Code != http.StatusOK || memberCount(t, rec.Body.Bytes()) != 0 {
				t.Errorf("GET Certificates: %d %s, want no members", rec.Code, rec.Body)
			}
			trust, err := s.media.Trust(ctx, key, media.DefaultSlot)
			if err != nil {
				t.Fatal(err)
			}
			if !trust.VerifyCertificate || len(trust.Certificates) != 0 {
				t.Errorf("the insert's trust: %+v, taken from the planted ConfigMap", trust)
			}
			// The tenant's own PATCH replaces the planted content, signed.
			if rec := s.do(t, http.MethodPatch, slotURI(key), `{"VerifyCertificate": false}`, ""); rec.Code != http.StatusOK && rec.Code != http.StatusNoContent {
				t.Fatalf("PATCH over the planted ConfigMap: %d %s", rec.Code, rec.Body)
			}
			if verifyCertificate(t, s, slotURI(key)) {
				t.Errorf("GET after the bridge's PATCH: VerifyCertificate true, want the PATCH's false")
			}
		})
	}
	t.Run("a signed ConfigMap edited", func(t *testing.T) {
		key, _ := newVM(t, "edited")
		if rec := s.do(t, http.MethodPost, slotURI(key)+"/Certificates", certBody(t, certPEM(t, "own", 0)), ""); rec.Code != http.StatusCreated {
			t.Fatalf("POST certificate: %d %s", rec.Code, rec.Body)
		}
		cm, err := cms.Get(ctx, media.TrustConfigMapName(key, media.DefaultSlot), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["verifyCertificate"] = "false"
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if rec := s.do(t, http.MethodPatch, slotURI(donor), `{"VerifyCertificate": false}`, ""); rec.Code != http.StatusOK && rec.Code != http.StatusNoContent {
			t.Fatalf("PATCH donor: %d %s", rec.Code, rec.Body)
		}
		if !verifyCertificate(t, s, slotURI(key)) {
			t.Errorf("GET %s: VerifyCertificate false, taken from the edited ConfigMap", slotURI(key))
		}
	})
}

// verifyCertificate is the VerifyCertificate of the VirtualMedia at uri.
func verifyCertificate(t *testing.T, s *stack, uri string) bool {
	t.Helper()
	rec := s.do(t, http.MethodGet, uri, "", "")
	var got struct{ VerifyCertificate *bool }
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK || got.VerifyCertificate == nil {
		t.Fatalf("GET %s: %d %s %v", uri, rec.Code, rec.Body, err)
	}
	return *got.VerifyCertificate
}

// memberCount is the Members@odata.count of a collection body.
func memberCount(t *testing.T, body []byte) int {
	t.Helper()
	var c struct {
		Count int `json:"Members@odata.count"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c.Count
}
