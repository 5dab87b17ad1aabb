package media

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
)

// A trust ConfigMap's labels, name and owner reference are readable, and
// so copyable, by anyone who can read the namespace: what the bridge acts
// on (VerifyCertificate, the certificates) counts only under a MAC the
// bridge wrote beside it ([objmac.Annotation]), over the namespace, the
// name, the owning VM's UID and the data. A ConfigMap without a valid MAC
// reads as the defaults (verify, no certificates), so a planted or edited
// one can only make an import stricter.

// trustPurpose is the trust ConfigMaps' [objmac.Derive] purpose.
const trustPurpose = "trust-configmap"

// trustKey is the key trust ConfigMaps are signed with, derived from the
// bridge's object secret ([Service.SetObjectSecret]).
func trustKey(secret []byte) objmac.Key { return objmac.Derive(secret, trustPurpose) }

// SetObjectSecret sets the secret the MACs of the objects the bridge acts
// on are keyed from (the session key: present on every replica, in the
// bridge's own namespace). Without one nothing is trusted: every slot
// reads as the defaults and a write of its trust fails.
func (s *Service) SetObjectSecret(secret []byte) {
	s.trustKey = trustKey(secret)
}

// trustMACFields is the identity a trust ConfigMap's MAC covers.
func trustMACFields(namespace, name string, owner types.UID) []string {
	return []string{"trust", namespace, name, string(owner)}
}

// signTrust sets cm's MAC for its data, owned by the VM with UID owner.
func signTrust(k objmac.Key, cm *corev1.ConfigMap, owner types.UID) {
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[objmac.Annotation] = k.Sum(trustMACFields(cm.Namespace, cm.Name, owner), cm.Data)
}

// trustSigned reports whether cm's data carries the bridge's MAC for the
// VM with UID owner.
func trustSigned(k objmac.Key, cm *corev1.ConfigMap, owner types.UID) bool {
	return k.Verify(cm.Annotations[objmac.Annotation], trustMACFields(cm.Namespace, cm.Name, owner), cm.Data)
}
