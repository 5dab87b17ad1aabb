package media

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// A slot's trust (Redfish VerifyCertificate and its Certificates
// collection) lives in a ConfigMap owned by the VM, named by
// [TrustConfigMapName]: it outlives inserts and ejects, any replica reads
// it, and it goes with the VM. No ConfigMap means the defaults: verify,
// with the system roots and the bridge's CA bundle.

// ComponentTrust labels the trust ConfigMaps.
const ComponentTrust = "media-tls"

const (
	verifyKey  = "verifyCertificate"
	certPrefix = "certificate-"
	// MaxCertificates bounds a slot's Certificates collection.
	MaxCertificates = 16
	// maxCertificateBytes bounds one posted CertificateString.
	maxCertificateBytes = 64 << 10
	// MaxTrustBytes bounds the PEM text of all a slot's certificates
	// together: what the trust cache holds for one slot.
	MaxTrustBytes = 64 << 10
)

// ErrCertificateNotFound reports a certificate id the slot does not hold
// (Redfish 404).
var ErrCertificateNotFound = errors.New("certificate not found")

// ErrForeignTrust reports a ConfigMap with the slot's trust name that the
// bridge did not create for this VM (no part-of label, or no owner
// reference to this VM's UID): it is neither read nor written.
var ErrForeignTrust = errors.New("trust ConfigMap not created by redfish-bridge for this VM")

// errNoObjectSecret reports a trust write on a Service without the secret
// its MAC is keyed from ([Service.SetObjectSecret]).
var errNoObjectSecret = errors.New("the bridge has no object secret to sign it with (SetObjectSecret)")

// TrustLimitError reports a certificate that would take the slot past
// [MaxCertificates] or [MaxTrustBytes] (Redfish 400 on CertificateString).
type TrustLimitError struct{ Reason string }

func (e *TrustLimitError) Error() string { return "certificate refused: " + e.Reason }

// InvalidCertificateError reports a CertificateString the bridge refuses
// (Redfish 400).
type InvalidCertificateError struct{ Reason string }

func (e *InvalidCertificateError) Error() string { return "invalid certificate: " + e.Reason }

// TrustConfigMapName is the ConfigMap holding the trust of a VM's slot.
func TrustConfigMapName(key system.Key, slot string) string { return ClaimName(key, slot) + "-tls" }

// SetTrustCache makes [Service.Trust] read the trust ConfigMaps from c
// instead of the apiserver.
func (s *Service) SetTrustCache(c *TrustCache) { s.trustCache = c }

// Trust returns the slot's trust settings: those of the slot's ConfigMap
// when the bridge made it for this VM ([owner.owns]) and its data carries
// the bridge's MAC (trustmac.go), else the defaults.
// With a [TrustCache] it reads no apiserver.
func (s *Service) Trust(ctx context.Context, key system.Key, slot string) (system.MediaTrust, error) {
	defaults := system.MediaTrust{VerifyCertificate: true}
	if !ValidSlot(slot) {
		return system.MediaTrust{}, fmt.Errorf("trust of %s slot %q: %w", key, slot, ErrInvalidSlot)
	}
	o, err := s.trustOwner(ctx, key)
	if err != nil {
		return system.MediaTrust{}, err
	}
	name := TrustConfigMapName(key, slot)
	var cm *corev1.ConfigMap
	if s.trustCache != nil {
		cm, err = s.trustCache.get(key.Namespace, name)
	} else {
		cm, err = s.liveTrust(ctx, key.Namespace, name)
	}
	if err != nil {
		return system.MediaTrust{}, fmt.Errorf("read trust ConfigMap %s/%s: %w", key.Namespace, name, err)
	}
	if cm == nil || !ownsTrust(o, cm) {
		return defaults, nil
	}
	if !trustSigned(s.trustKey, cm, o.UID) {
		logctx.From(ctx).Debug("trust ConfigMap not signed by the bridge: the slot reads as the defaults",
			"configMap", key.Namespace+"/"+name, "vm", key.String(), "slot", slot)
		return defaults, nil
	}
	return decodeTrust(cm), nil
}

// ownsTrust reports whether cm is a trust ConfigMap the bridge made for
// o's VM: its trust label and [owner.owns] (part-of label, owner
// reference with the VM's UID). A ConfigMap that merely names the VM is
// not.
func ownsTrust(o owner, cm *corev1.ConfigMap) bool {
	return cm.Labels[LabelComponent] == ComponentTrust && o.Owns(cm)
}

// trustOwner is the VM whose slots' trust is asked, with its UID.
func (s *Service) trustOwner(ctx context.Context, key system.Key) (owner, error) {
	vm, err := s.w.Read(ctx, key)
	if err != nil {
		return owner{}, fmt.Errorf("read %s: %w", key, err)
	}
	return owner{Key: key, UID: vm.Object.GetUID()}, nil
}

// SetVerifyCertificate sets the slot's VerifyCertificate; it applies to
// the next insert.
func (s *Service) SetVerifyCertificate(ctx context.Context, key system.Key, slot string, verify bool) error {
	_, err := s.editTrust(ctx, key, slot, func(t *system.MediaTrust) error {
		t.VerifyCertificate = verify
		return nil
	})
	return err
}

// AddCertificate adds a PEM certificate (or chain) to the slot's
// Certificates and returns it with its new id.
func (s *Service) AddCertificate(ctx context.Context, key system.Key, slot, pemText string) (system.MediaCertificate, error) {
	if _, err := ParseCertificates(pemText); err != nil {
		return system.MediaCertificate{}, err
	}
	var added system.MediaCertificate
	_, err := s.editTrust(ctx, key, slot, func(t *system.MediaTrust) error {
		if err := withinTrustLimits(*t, pemText); err != nil {
			return err
		}
		next := 1
		for _, c := range t.Certificates {
			if n, err := strconv.Atoi(c.ID); err == nil && n >= next {
				next = n + 1
			}
		}
		added = system.MediaCertificate{ID: strconv.Itoa(next), PEM: pemText}
		t.Certificates = append(t.Certificates, added)
		return nil
	})
	if err != nil {
		return system.MediaCertificate{}, err
	}
	logctx.From(ctx).Info("media certificate added", "vm", key.String(), "slot", slot, "certificate", added.ID)
	return added, nil
}

// DeleteCertificate removes certificate id from the slot's Certificates.
func (s *Service) DeleteCertificate(ctx context.Context, key system.Key, slot, id string) error {
	_, err := s.editTrust(ctx, key, slot, func(t *system.MediaTrust) error {
		for i, c := range t.Certificates {
			if c.ID == id {
				t.Certificates = append(t.Certificates[:i], t.Certificates[i+1:]...)
				return nil
			}
		}
		return fmt.Errorf("certificate %q of %s slot %s: %w", id, key, slot, ErrCertificateNotFound)
	})
	if err == nil {
		logctx.From(ctx).Info("media certificate deleted", "vm", key.String(), "slot", slot, "certificate", id)
	}
	return err
}

// ParseCertificates checks a CertificateString: PEM CERTIFICATE blocks
// only, at least one, each a valid X.509 certificate.
func ParseCertificates(pemText string) ([]*x509.Certificate, error) {
	if len(pemText) > maxCertificateBytes {
		return nil, &InvalidCertificateError{Reason: fmt.Sprintf("longer than %d bytes", maxCertificateBytes)}
	}
	var certs []*x509.Certificate
	rest := []byte(pemText)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return nil, &InvalidCertificateError{Reason: fmt.Sprintf("PEM block %q is not a CERTIFICATE", b.Type)}
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, &InvalidCertificateError{Reason: err.Error()}
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, &InvalidCertificateError{Reason: "no PEM certificate"}
	}
	if strings.TrimSpace(string(rest)) != "" {
		return nil, &InvalidCertificateError{Reason: "text after the last PEM block"}
	}
	return certs, nil
}

// withinTrustLimits refuses pemText when t holds [MaxCertificates]
// already, or when it would take t's PEM text past [MaxTrustBytes].
func withinTrustLimits(t system.MediaTrust, pemText string) error {
	if len(t.Certificates) >= MaxCertificates {
		return &TrustLimitError{Reason: fmt.Sprintf("the slot holds %d certificates already, the most it takes; delete one first", MaxCertificates)}
	}
	held := 0
	for _, c := range t.Certificates {
		held += len(c.PEM)
	}
	if held+len(pemText) > MaxTrustBytes {
		return &TrustLimitError{Reason: fmt.Sprintf("the slot's certificates may total at most %d bytes; it holds %d in %d certificates and this one is %d: delete certificates first",
			MaxTrustBytes, held, len(t.Certificates), len(pemText))}
	}
	return nil
}

// liveTrust reads ConfigMap namespace/name; nil when there is none.
func (s *Service) liveTrust(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cm, err := s.kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return cm, err
}

// editTrust applies edit to the slot's trust on a fresh (live) read and
// writes it back (resourceVersion precondition, retried on conflict),
// creating the ConfigMap, owned by the VM, on the first edit. A ConfigMap
// of that name the bridge did not make for this VM is [ErrForeignTrust].
// With a [TrustCache] it returns once the cache shows the write.
func (s *Service) editTrust(ctx context.Context, key system.Key, slot string, edit func(*system.MediaTrust) error) (system.MediaTrust, error) {
	if !ValidSlot(slot) {
		return system.MediaTrust{}, fmt.Errorf("trust of %s slot %q: %w", key, slot, ErrInvalidSlot)
	}
	name := TrustConfigMapName(key, slot)
	var out system.MediaTrust
	var written *corev1.ConfigMap
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := s.trustOwner(ctx, key)
		if err != nil {
			return err
		}
		cm, err := s.liveTrust(ctx, key.Namespace, name)
		if err != nil {
			return fmt.Errorf("read trust ConfigMap %s/%s: %w", key.Namespace, name, err)
		}
		if cm != nil && !ownsTrust(o, cm) {
			return fmt.Errorf("ConfigMap %s/%s: %w", key.Namespace, name, ErrForeignTrust)
		}
		t := system.MediaTrust{VerifyCertificate: true}
		switch {
		case cm == nil:
		case trustSigned(s.trustKey, cm, o.UID):
			t = decodeTrust(cm)
		default: // ours by label and owner, not by MAC: start from the defaults
			logctx.From(ctx).Warn("trust ConfigMap not signed by the bridge: its content is replaced",
				"configMap", key.Namespace+"/"+name, "vm", key.String(), "slot", slot)
		}
		if err := edit(&t); err != nil {
			return err
		}
		out = t
		cms := s.kube.CoreV1().ConfigMaps(key.Namespace)
		if !s.trustKey.Valid() {
			return fmt.Errorf("trust ConfigMap %s/%s: %w", key.Namespace, name, errNoObjectSecret)
		}
		if cm != nil {
			cm.Data = encodeTrust(t)
			signTrust(s.trustKey, cm, o.UID)
			written, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: apply.ManagerMedia})
			return err
		}
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name:            name,
				Namespace:       key.Namespace,
				Labels:          importer.ObjectLabels(ComponentTrust, slot),
				OwnerReferences: []metav1.OwnerReference{o.Ref()},
			},
			Data: encodeTrust(t),
		}
		signTrust(s.trustKey, cm, o.UID)
		written, err = cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: apply.ManagerMedia})
		if apierrors.IsAlreadyExists(err) { // another request created it: edit that one
			return apierrors.NewConflict(corev1.Resource("configmaps"), cm.Name, err)
		}
		return err
	})
	if err != nil {
		return system.MediaTrust{}, fmt.Errorf("edit trust of %s slot %s: %w", key, slot, err)
	}
	if s.trustCache != nil && written != nil {
		s.trustCache.await(ctx, key.Namespace, name, written.ResourceVersion)
	}
	return out, nil
}

func decodeTrust(cm *corev1.ConfigMap) system.MediaTrust {
	t := system.MediaTrust{VerifyCertificate: cm.Data[verifyKey] != "false"}
	for k, v := range cm.Data {
		if id, ok := strings.CutPrefix(k, certPrefix); ok {
			t.Certificates = append(t.Certificates, system.MediaCertificate{ID: id, PEM: v})
		}
	}
	sort.Slice(t.Certificates, func(i, j int) bool {
		a, _ := strconv.Atoi(t.Certificates[i].ID)
		b, _ := strconv.Atoi(t.Certificates[j].ID)
		return a < b
	})
	return t
}

func encodeTrust(t system.MediaTrust) map[string]string {
	data := map[string]string{verifyKey: strconv.FormatBool(t.VerifyCertificate)}
	for _, c := range t.Certificates {
		data[certPrefix+c.ID] = c.PEM
	}
	return data
}
