// Package kubeauth backs the Redfish service's accounts and sessions with
// Kubernetes objects, so every replica sees the same users and a logout on
// one replica ends the session on all of them:
//
//   - [WatchSecretUsers]: users from a Secret (bcrypt hashes and scopes, see
//     auth.ParseSecretData), watched, so a changed password or removed user
//     takes effect at once; a malformed entry rejects that user only.
//   - [WatchConfigMapRevocations]: ended sessions as keys of a ConfigMap
//     (session id -> expiry and user, created on the first write), written by JSON
//     merge patches under the field manager "redfish-sessions" that add the
//     one key and delete the expired ones. A logout finding
//     [MaxRevocations] unexpired sessions recorded, or one the apiserver
//     refuses, ends the session nowhere and returns the error
//     ([ErrRevocationsFull] when full), so the client can retry; a logout
//     that succeeds is refused by every replica when it returns (each
//     accepts a token only with a cache confirmed current within
//     [RevocationLag]).
//     The same ConfigMap records open sessions ("open.<id>": expiry and
//     user; auth.Sessions), so an Administrator lists and ends any user's
//     session on any replica; a login it cannot record fails. Every entry
//     counts against its user's [MaxRecordsPerUser]; a logout replaces its
//     session's open entry, so it adds none. An open entry's expiry is the
//     session's end by inactivity, pushed back by its use on any replica
//     (Touch, at most once per tenth of the timeout; activity.go).
//   - [SessionKey]: the HMAC key that signs session tokens, from a Secret
//     every replica reads (at least 32 bytes), created with a random key
//     when missing.
package kubeauth
