// Package reliability holds end-to-end tests of the bridge under hostile or
// broken conditions, run against the whole demo (real apiserver, simulator,
// bridge over HTTPS): authentication on every route, session logout, login
// throttling per client, tenant isolation between users, and no response
// shared between users. Each test logs what it tried (requests, bad
// inputs, objects checked); docs/reliability.md collects the numbers.
package reliability
