package download

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
)

// Keys of the import Secret and the import ConfigMap (both named
// media.ImportSecretName): the credentials in CDI's endpoint Secret format
// (accessKeyId, secretKey), the CA bundle as ca.pem (CDI's certConfigMap
// trusts every key). The import pod mounts them under media.ImportConfigPath.
const (
	CredentialUserKey     = "accessKeyId"
	CredentialPasswordKey = "secretKey"
	CAKey                 = "ca.pem"
)

// Client is the HTTP client of the import: the address policy on every
// connection, the request's TLS trust (system roots plus CAFile, or none
// under SkipVerify), and its credentials sent to the image URL's scheme,
// host and port only, never to another one a redirect leads to (and a
// redirect from https to http is refused outright: [PolicyClient]).
func (r ImportRequest) Client() (*http.Client, error) {
	c := PolicyClient(r.Policy, 0)
	t := c.Transport.(*http.Transport)
	tc, err := r.tlsConfig()
	if err != nil {
		return nil, err
	}
	t.TLSClientConfig = tc
	if r.CredentialsDir == "" {
		return c, nil
	}
	user, err := readCredential(r.CredentialsDir, CredentialUserKey)
	if err != nil {
		return nil, err
	}
	pass, err := readCredential(r.CredentialsDir, CredentialPasswordKey)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("image URL: %w", err)
	}
	c.Transport = &basicAuth{base: t, scheme: u.Scheme, host: u.Host, user: user, pass: pass}
	return c, nil
}

func (r ImportRequest) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if r.SkipVerify {
		tc.InsecureSkipVerify = true // the slot's VerifyCertificate is false, set by the Redfish client
		return tc, nil
	}
	if r.CAFile == "" {
		return tc, nil
	}
	pem, err := os.ReadFile(r.CAFile)
	if err != nil {
		return nil, fmt.Errorf("read CA bundle: %w", err)
	}
	pool, ok := rootsWith(pem)
	if !ok {
		return nil, fmt.Errorf("CA bundle %s holds no PEM certificate", r.CAFile)
	}
	tc.RootCAs = pool
	return tc, nil
}

// rootsWith is what an import trusts (and the insert's check of it,
// [AddrPolicy.CheckTLS]): the system roots and the certificates of pem;
// ok is false when pem holds none.
func rootsWith(pem []byte) (pool *x509.CertPool, ok bool) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	return pool, pool.AppendCertsFromPEM(pem)
}

func readCredential(dir, key string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, key))
	if err != nil {
		return "", fmt.Errorf("read image credentials: %w", err)
	}
	return string(b), nil
}

// basicAuth adds HTTP Basic credentials to requests for one scheme and
// host (with its port: net/http itself would forward them to another port
// or scheme of the same host name on a redirect).
type basicAuth struct {
	base                     http.RoundTripper
	scheme, host, user, pass string
}

func (b *basicAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == b.scheme && req.URL.Host == b.host && req.Header.Get("Authorization") == "" {
		req = req.Clone(req.Context())
		req.SetBasicAuth(b.user, b.pass)
	}
	return b.base.RoundTrip(req)
}

// hint says what the Redfish client can do about a TLS or authentication
// failure ("" for other errors); it ends up in the Task's message.
func (r ImportRequest) hint(err error) string {
	var unknown x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	var hostname x509.HostnameError
	var status *HTTPStatusError
	var downgrade *DowngradeError
	switch {
	case errors.As(err, &downgrade):
		return " (the image server redirected from HTTPS to plain HTTP: serve the image over HTTPS throughout)"
	case errors.As(err, &unknown) || errors.As(err, &verify) || errors.As(err, &hostname):
		return " (the image server's TLS certificate is not trusted: " + UntrustedHint + ")"
	case errors.As(err, &status) && status.Code == http.StatusUnauthorized && r.CredentialsDir == "":
		return " (the image server asks for credentials: give UserName and Password in InsertMedia)"
	case errors.As(err, &status) && (status.Code == http.StatusUnauthorized || status.Code == http.StatusForbidden):
		return " (the image server refused the UserName and Password given in InsertMedia)"
	}
	return ""
}

// HTTPStatusError is a download answered with another status than 200.
type HTTPStatusError struct {
	URL    string
	Status string
	Code   int
}

func (e *HTTPStatusError) Error() string { return fmt.Sprintf("GET %s: HTTP %s", e.URL, e.Status) }
