package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"time"
)

// PaddedCertPEM is a self-signed certificate named cn whose PEM is about
// size bytes (padded with DNS names; at least a few hundred bytes): what
// the tests of a slot's certificate caps POST.
func PaddedCertPEM(cn string, size int) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("certificate key: %w", err)
	}
	var names []string
	for n := 0; n*40*4/3 < size-600; n++ {
		names = append(names, fmt.Sprintf("host-%06d.padding.example.test", n))
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     names,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", fmt.Errorf("certificate %s: %w", cn, err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}
