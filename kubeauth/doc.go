// Package kubeauth backs the Redfish service's accounts and sessions with
// Kubernetes objects, so every replica sees the same users and a logout on
// one replica ends the session on all of them:
//
//   - [SecretUsers]: users from a Secret (bcrypt hashes and scopes, see
//     auth.ParseSecretData), watched, so a changed password or removed user
//     takes effect at once; a malformed entry rejects that user only.
//   - [ConfigMapRevocations]: ended sessions as keys of a ConfigMap (session
//     id -> expiry), each written by a JSON merge patch of that one key
//     under the field manager "redfish-sessions"; expired keys are pruned,
//     at most [MaxRevocations] live ones are kept, and a logout that cannot
//     be recorded still ends the session on this replica (fail closed).
//     The same ConfigMap records open sessions ("open.<id>": expiry and
//     user; auth.Sessions), so an Administrator lists and ends any user's
//     session on any replica; a login it cannot record fails.
//   - [SessionKey]: the HMAC key that signs session tokens, from a Secret
//     every replica reads (at least 32 bytes).
package kubeauth
