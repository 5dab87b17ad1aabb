package bench

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// writeTLSFiles writes the demo's self-signed certificate (the one the
// [FloorServer] serves with) and its key as PEM files into dir, for the
// bridge binary's --tls-cert and --tls-key.
func writeTLSFiles(dir string) (certFile, keyFile string, err error) {
	cert, err := demo.SelfSignedCert()
	if err != nil {
		return "", "", err
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return "", "", fmt.Errorf("encode TLS key: %w", err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{{certFile, "CERTIFICATE", cert.Certificate[0]}, {keyFile, "PRIVATE KEY", key}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			return "", "", fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return certFile, keyFile, nil
}
