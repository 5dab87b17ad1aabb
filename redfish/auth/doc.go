// Package auth authenticates Redfish clients and says what each may see.
//
// It owns: the user source ([Users], backed by the lead with a Kubernetes
// Secret of bcrypt hashes and per-user [Scope]s), self-validating session
// tokens (HMAC-signed with a key every replica shares, so any replica accepts
// a token another issued), session revocation ([Revocations], backed by a
// Kubernetes object; tests use internal/testutil's in-memory one) and
// failed-login throttling ([Throttle]) keyed on the TCP peer address and the
// user name.
//
// It knows nothing about HTTP: redfish/ turns headers into calls to
// [Authenticator] and its errors into Redfish error bodies.
package auth
