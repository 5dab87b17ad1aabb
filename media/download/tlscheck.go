package download

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"time"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// TLSCheckTimeout bounds [AddrPolicy.CheckTLS]: the insert answers within
// it, whatever the image server does.
const TLSCheckTimeout = 3 * time.Second

// UntrustedHint is what a Redfish client can do about an image server
// whose certificate the bridge does not trust.
const UntrustedHint = "POST its CA to the slot's Certificates, add it to the bridge's CA bundle, or PATCH VerifyCertificate false"

// CheckTLS is an insert's look at an https image server before anything is
// recorded: one TLS handshake with the image URL's host and port (dialed
// under the policy, as the import pod dials), trusting the system roots
// and caPEM (the bridge's CA bundle and the slot's Certificates, what the
// import will trust), bounded by [TLSCheckTimeout] and ctx. It refuses,
// with an [*InvalidURLError] carrying the TLS reason and [UntrustedHint],
// only a certificate the handshake proved untrusted (unknown authority,
// wrong name, expired): the import would fail the same way. Anything else
// (a plain http URL, a host it cannot reach or that answers slowly, an
// address the policy refuses) is nil: the import runs and reports its own
// outcome, as does a redirect to another server, which the handshake does
// not see.
func (p AddrPolicy) CheckTLS(ctx context.Context, raw string, caPEM []byte) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return nil
	}
	pool, _ := rootsWith(caPEM) // none in caPEM: the system roots alone
	port := u.Port()
	if port == "" {
		port = "443"
	}
	ctx, cancel := context.WithTimeout(ctx, TLSCheckTimeout)
	defer cancel()
	d := tls.Dialer{
		NetDialer: &net.Dialer{Control: p.Control},
		Config:    &tls.Config{RootCAs: pool, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12},
	}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err == nil {
		_ = conn.Close()
		return nil
	}
	var verify *tls.CertificateVerificationError
	if !errors.As(err, &verify) {
		logctx.From(ctx).Debug("image TLS check inconclusive: the import will tell", "url", logctx.RedactURL(raw), "err", err)
		return nil
	}
	return &InvalidURLError{URL: logctx.RedactURL(raw),
		Reason: "the image server's TLS certificate is not trusted (" + verify.Err.Error() + "): " + UntrustedHint}
}
