package testcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Identities in the static token file.
const (
	// AdminUser is in group system:masters: it may do anything.
	AdminUser = "admin"
	// BridgeUser is the bridge's identity, limited by RBAC (see rbac.go).
	BridgeUser = "redfish-bridge"
	// VirtControllerUser is virt-controller's identity: the service
	// account virt-operator gives it (virt-api's webhooks let only
	// KubeVirt's own service accounts change a VMI's spec and reserved
	// labels), in group system:masters instead of its ClusterRole.
	VirtControllerUser = "system:serviceaccount:" + KubeVirtNamespace + ":kubevirt-controller"
	// VirtHandlerUser is virt-handler's service account ([Cluster.VirtHandler]).
	VirtHandlerUser = "system:serviceaccount:" + KubeVirtNamespace + ":kubevirt-handler"
	// nodeNameExtra is the user extra a bound service account token of a
	// pod carries: its node. virt-api's VMI update webhook (KubeVirt's
	// NodeRestriction, on by default) lets virt-handler change only the
	// VMIs on its node.
	nodeNameExtra = "authentication.kubernetes.io/node-name"
)

// credentials are the files the apiserver is started with and the secrets
// clients need.
type credentials struct {
	servingCertPEM []byte // self-signed; also the clients' CA
	certFile       string
	keyFile        string
	saKeyFile      string // RSA private key: signs service account tokens
	saPubFile      string
	tokenFile      string
	adminToken     string
	bridgeToken    string
	// virtControllerToken authenticates VirtControllerUser.
	virtControllerToken string
}

// writeCredentials generates serving certificate, service account key and
// tokens into dir. Everything is made in Go: no openssl needed.
func writeCredentials(dir string) (*credentials, error) {
	c := &credentials{
		certFile:  filepath.Join(dir, "apiserver.crt"),
		keyFile:   filepath.Join(dir, "apiserver.key"),
		saKeyFile: filepath.Join(dir, "sa.key"),
		saPubFile: filepath.Join(dir, "sa.pub"),
		tokenFile: filepath.Join(dir, "tokens.csv"),
	}
	var err error
	if c.servingCertPEM, err = writeServingCert(c.certFile, c.keyFile); err != nil {
		return nil, err
	}
	if err := writeServiceAccountKey(c.saKeyFile, c.saPubFile); err != nil {
		return nil, err
	}
	if c.adminToken, err = randomToken(); err != nil {
		return nil, err
	}
	if c.bridgeToken, err = randomToken(); err != nil {
		return nil, err
	}
	if c.virtControllerToken, err = randomToken(); err != nil {
		return nil, err
	}
	// token,user,uid,"group1,group2"
	tokens := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n%s,%s,%s\n%s,%s,%s,\"system:masters\"\n",
		c.adminToken, AdminUser, "uid-admin", c.bridgeToken, BridgeUser, "uid-redfish-bridge",
		c.virtControllerToken, VirtControllerUser, "uid-kubevirt-controller")
	if err := os.WriteFile(c.tokenFile, []byte(tokens), 0o600); err != nil {
		return nil, fmt.Errorf("write token file: %w", err)
	}
	return c, nil
}

func writeServingCert(certFile, keyFile string) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate serving key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("generate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "testcluster-apiserver"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal serving key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write serving certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, fmt.Errorf("write serving key: %w", err)
	}
	return certPEM, nil
}

func writeServiceAccountKey(keyFile, pubFile string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("marshal service account public key: %w", err)
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyFile, priv, 0o600); err != nil {
		return fmt.Errorf("write service account key: %w", err)
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o600); err != nil {
		return fmt.Errorf("write service account public key: %w", err)
	}
	return nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
