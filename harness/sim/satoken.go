package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
)

// The test cluster runs kube-apiserver without the ServiceAccount admission
// plugin (no token controller), so no pod gets the projected API token
// volume (kube-api-access-*) a real cluster adds. virt-controller counts
// on it: an attachment pod's volumes are its PVCs "-2 for empty dir and
// token" (pkg/virt-controller/watch/vmi/volume-hotplug.go), and one
// without the token volume never matches the volumes it was made for, so
// virt-controller deletes and re-creates it forever. The simulator plays
// that plugin for attachment pods only: a mutating webhook (its own HTTPS
// server, objectSelector kubevirt.io=hotplug-disk, namespaces it watches,
// failurePolicy Ignore) adds the token volume as the plugin would.

// tokenVolume is the volume the ServiceAccount admission plugin adds.
var tokenVolume = corev1.Volume{
	Name: "kube-api-access-sim",
	VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Path: "token", ExpirationSeconds: ptr.To[int64](3607),
		}}},
	}},
}

// serveTokenWebhook starts the webhook server until ctx ends and registers
// it; the registration is deleted when ctx ends.
func (s *Simulator) serveTokenWebhook(ctx context.Context) error {
	ca, err := testca.New("sim admission")
	if err != nil {
		return fmt.Errorf("sim: admission CA: %w", err)
	}
	srv, err := ca.NewServer(http.HandlerFunc(s.admitAttachmentPod))
	if err != nil {
		return fmt.Errorf("sim: admission server: %w", err)
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := "redfish-bridge-sim-token-" + hex.EncodeToString(suffix)
	url := srv.URL + "/mutate-pods"
	hook := admissionregistrationv1.MutatingWebhook{
		Name:                    "token.sim.redfish-bridge.io",
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: []byte(ca.PEM)},
		Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
		FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
		ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{kubevirtv1.AppLabel: attachmentPodApp}},
	}
	if len(s.opts.Namespaces) > 0 {
		hook.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: s.opts.Namespaces,
		}}}
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{hook},
	}
	hooks := s.kube.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if _, err := hooks.Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		srv.Close()
		return fmt.Errorf("sim: register webhook %s: %w", name, err)
	}
	context.AfterFunc(ctx, func() {
		err := hooks.Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			s.log.Warn("delete webhook", "name", name, "error", err)
		}
		srv.Close()
	})
	return nil
}

// admitAttachmentPod answers an AdmissionReview for a pod with a JSON
// patch adding [tokenVolume] and, when the pod names none, the
// ServiceAccount "default" (nothing when the pod has the volume).
func (s *Simulator) admitAttachmentPod(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("admission review: %v", err), http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	var pod corev1.Pod
	if err := json.Unmarshal(review.Request.Object.Raw, &pod); err == nil && !hasVolume(&pod, tokenVolume.Name) {
		op := map[string]any{"op": "add", "path": "/spec/volumes/-", "value": tokenVolume}
		if len(pod.Spec.Volumes) == 0 {
			op = map[string]any{"op": "add", "path": "/spec/volumes", "value": []corev1.Volume{tokenVolume}}
		}
		ops := []any{op}
		if pod.Spec.ServiceAccountName == "" { // the plugin's default; a token needs one
			ops = append(ops, map[string]any{"op": "add", "path": "/spec/serviceAccountName", "value": "default"})
		}
		patch, _ := json.Marshal(ops)
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	}
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

func hasVolume(pod *corev1.Pod, name string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}
