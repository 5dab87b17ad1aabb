package media

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The import Secret carries the InsertMedia credentials, the import
// ConfigMap the CAs the download trusts: what an import needs besides the
// URL. Both are created, owned by the VM, before the insert is recorded;
// the import pod mounts them under [ImportConfigPath] (only file paths
// reach its arguments), a CDI DataVolume names the ConfigMap as its
// certConfigMap (an insert with credentials is never imported by CDI:
// cdiimport/importcdi.go); both are deleted when the import ends (succeeded,
// failed, timed out) and on eject. Credentials are needed for the
// download only, so they do not outlive it.

// ComponentImportSecret labels the import Secrets and ConfigMaps.
const ComponentImportSecret = "import-secret"

// ImportSecretName is the import Secret and ConfigMap of one insert (the
// import pod's name: one of each per insert).
func ImportSecretName(claim, insertID string) string { return PodName(claim, insertID) }

// CABundle names the bridge-wide CA bundle: a key of a ConfigMap in the
// bridge's namespace, trusted by every slot that verifies certificates.
type CABundle struct {
	Namespace, ConfigMap, Key string
}

// DefaultCABundleKey is the bundle's key unless configured otherwise
// (trust-manager and cert-manager write ca.crt).
const DefaultCABundleKey = "ca.crt"

// SetCABundle makes every verifying insert trust b besides the system
// roots; a zero b trusts the system roots alone.
func (s *Service) SetCABundle(b CABundle) {
	if b.Key == "" {
		b.Key = DefaultCABundleKey
	}
	s.bundle = b
}

// readCABundle returns the bridge-wide bundle's PEM ("" when none is set
// or its ConfigMap does not exist).
func (s *Service) readCABundle(ctx context.Context) (string, error) {
	if s.bundle.ConfigMap == "" {
		return "", nil
	}
	cm, err := s.kube.CoreV1().ConfigMaps(s.bundle.Namespace).Get(ctx, s.bundle.ConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Not there (yet): the system roots and the slot's certificates
		// still apply; an untrusted server fails the import with a hint.
		logctx.From(ctx).Warn("the bridge's CA bundle ConfigMap does not exist; imports trust the system roots and their slot's certificates",
			"configMap", s.bundle.Namespace+"/"+s.bundle.ConfigMap)
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the bridge's CA bundle ConfigMap %s/%s: %w", s.bundle.Namespace, s.bundle.ConfigMap, err)
	}
	pem, ok := cm.Data[s.bundle.Key]
	if !ok {
		return "", fmt.Errorf("the bridge's CA bundle ConfigMap %s/%s has no key %q", s.bundle.Namespace, s.bundle.ConfigMap, s.bundle.Key)
	}
	return pem, nil
}

// importData is what an insert's import Secret (credentials) and
// ConfigMap (CAs) hold, and the slot fields that say so; nil data when the
// import needs neither.
func (s *Service) importData(ctx context.Context, key system.Key, slot string, req system.MediaInsert) (map[string][]byte, system.MediaSlot, error) {
	var fields system.MediaSlot
	trust, err := s.Trust(ctx, key, slot)
	if err != nil {
		return nil, fields, err
	}
	data := map[string][]byte{}
	if trust.VerifyCertificate {
		bundle, err := s.readCABundle(ctx)
		if err != nil {
			return nil, fields, err
		}
		var ca strings.Builder
		for _, p := range append([]string{bundle}, certPEMs(trust)...) {
			if p = strings.TrimSpace(p); p != "" {
				ca.WriteString(p + "\n")
			}
		}
		if ca.Len() > 0 {
			data[download.CAKey] = []byte(ca.String())
			fields.CABundle = true
		}
	} else {
		fields.Insecure = true
	}
	if req.HasCredentials() {
		data[download.CredentialUserKey] = []byte(req.UserName)
		data[download.CredentialPasswordKey] = []byte(req.Password)
		fields.Credentials = true
	}
	if len(data) == 0 {
		return nil, fields, nil
	}
	return data, fields, nil
}

func certPEMs(t system.MediaTrust) []string {
	out := make([]string, len(t.Certificates))
	for i, c := range t.Certificates {
		out[i] = c.PEM
	}
	return out
}

// createImportSecret creates the import ConfigMap (the CA bundle, when
// slot.CABundle) and Secret (the credentials, when slot.Credentials) of
// slot, named in slot.ImportSecret, owned by the VM. Both are immutable: a
// namespace user cannot edit the CAs or credentials the import pod will
// mount (only delete the object, which fails the import).
func (s *Service) createImportSecret(ctx context.Context, vm *apply.VM, slot system.MediaSlot, data map[string][]byte) error {
	o := owner{Key: vm.Key, UID: vm.Object.GetUID()}
	l := importer.ObjectLabels(ComponentImportSecret, slot.Slot)
	l[LabelInsertID] = slot.InsertID
	meta := metav1.ObjectMeta{
		Name:            slot.ImportSecret,
		Namespace:       vm.Key.Namespace,
		Labels:          l,
		OwnerReferences: []metav1.OwnerReference{o.Ref()},
	}
	create := metav1.CreateOptions{FieldManager: apply.ManagerMedia}
	if ca, ok := data[download.CAKey]; ok {
		cm := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{download.CAKey: string(ca)}, Immutable: ptr.To(true)}
		if _, err := s.kube.CoreV1().ConfigMaps(vm.Key.Namespace).Create(ctx, cm, create); err != nil {
			return fmt.Errorf("create import ConfigMap %s/%s: %w", vm.Key.Namespace, slot.ImportSecret, err)
		}
	}
	if !slot.Credentials {
		return nil
	}
	sec := &corev1.Secret{
		ObjectMeta: meta,
		Type:       corev1.SecretTypeOpaque,
		Immutable:  ptr.To(true),
		Data:       map[string][]byte{download.CredentialUserKey: data[download.CredentialUserKey], download.CredentialPasswordKey: data[download.CredentialPasswordKey]},
	}
	if _, err := s.kube.CoreV1().Secrets(vm.Key.Namespace).Create(ctx, sec, create); err != nil {
		return fmt.Errorf("create import Secret %s/%s: %w", vm.Key.Namespace, slot.ImportSecret, err)
	}
	return nil
}

// deleteImportSecret deletes the slot's import Secret and ConfigMap (""
// and missing ones are fine). The bridge may not read Secrets, so the name
// is checked instead: only the name the bridge gives this insert's objects
// ([ImportSecretName] of the VM's own claim) is ever deleted; another
// Secret a hand-edited slot annotation names is left alone.
func deleteImportSecret(ctx context.Context, kube kubernetes.Interface, o owner, slot system.MediaSlot) error {
	name := slot.ImportSecret
	if name == "" {
		return nil
	}
	if slot.ClaimName != ClaimName(o.Key, slot.Slot) || name != ImportSecretName(slot.ClaimName, slot.InsertID) ||
		len(slot.InsertID) != insertIDLength {
		return nil // not a name the bridge gives: left alone
	}
	err := kube.CoreV1().Secrets(o.Key.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete import Secret %s/%s: %w", o.Key.Namespace, name, err)
	}
	if !slot.CABundle {
		return nil
	}
	err = kube.CoreV1().ConfigMaps(o.Key.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete import ConfigMap %s/%s: %w", o.Key.Namespace, name, err)
	}
	return nil
}
