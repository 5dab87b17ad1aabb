// Package auth authenticates Redfish clients and says what each may see.
//
// It owns: the user source ([Users]; [ParseSecretData] reads the bcrypt
// hashes and per-user [Scope]s of a Secret), self-validating session tokens
// (HMAC-signed with a key every replica shares, so any replica accepts a
// token another issued), the record of open sessions ([Sessions]), session
// revocation ([Revocations]; tests use harness/testutil's in-memory one)
// and failed-login throttling ([Throttle]) keyed on the TCP peer address
// (an IPv6 address counted as its /64) and the user name. Package kubeauth
// backs the users, the sessions, the revocations and the signing key with
// Kubernetes objects.
//
// It knows nothing about HTTP: redfish/ turns headers into calls to
// [Authenticator] and its errors into Redfish error bodies.
package auth
