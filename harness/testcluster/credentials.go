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
	// VirtAPIUser is virt-api's service account, in group system:masters
	// instead of its ClusterRole: the start/stop/restart subresources patch
	// the VMI's spec, which virt-api's own VMI update webhook allows only
	// KubeVirt's service accounts.
	VirtAPIUser = "system:serviceaccount:" + KubeVirtNamespace + ":kubevirt-apiserver"
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
	// virtAPIToken authenticates VirtAPIUser.
	virtAPIToken string
	// proxyClientCertFile and proxyClientKeyFile are the certificate the
	// apiserver's aggregator presents to aggregated API servers (virt-api):
	// CN proxyClientName, signed by the request-header CA.
	proxyClientCertFile string
	proxyClientKeyFile  string
}

// proxyClientName is the common name of the aggregator's proxy client
// certificate, the one --requestheader-allowed-names admits.
const proxyClientName = "front-proxy-client"

// writeCredentials generates serving certificate, service account key and
// tokens into dir. Everything is made in Go: no openssl needed.
func writeCredentials(dir string) (*credentials, error) {
	c := &credentials{
		certFile:            filepath.Join(dir, "apiserver.crt"),
		keyFile:             filepath.Join(dir, "apiserver.key"),
		saKeyFile:           filepath.Join(dir, "sa.key"),
		saPubFile:           filepath.Join(dir, "sa.pub"),
		tokenFile:           filepath.Join(dir, "tokens.csv"),
		proxyClientCertFile: filepath.Join(dir, "proxy-client.crt"),
		proxyClientKeyFile:  filepath.Join(dir, "proxy-client.key"),
	}
	ca, err := writeCert(c.certFile, c.keyFile, certSpec{cn: "testcluster-apiserver", hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		return nil, err
	}
	c.servingCertPEM = ca.pem
	if _, err := writeCert(c.proxyClientCertFile, c.proxyClientKeyFile, certSpec{cn: proxyClientName, client: true, parent: ca}); err != nil {
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
	if c.virtAPIToken, err = randomToken(); err != nil {
		return nil, err
	}
	// token,user,uid,"group1,group2"
	tokens := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n%s,%s,%s\n%s,%s,%s,\"system:masters\"\n%s,%s,%s,\"system:masters\"\n",
		c.adminToken, AdminUser, "uid-admin", c.bridgeToken, BridgeUser, "uid-redfish-bridge",
		c.virtControllerToken, VirtControllerUser, "uid-kubevirt-controller",
		c.virtAPIToken, VirtAPIUser, "uid-kubevirt-apiserver")
	if err := os.WriteFile(c.tokenFile, []byte(tokens), 0o600); err != nil {
		return nil, fmt.Errorf("write token file: %w", err)
	}
	return c, nil
}

// certSpec describes a certificate writeCert makes.
type certSpec struct {
	cn string
	// hosts are the serving certificate's IP and DNS names.
	hosts []string
	// client makes a client certificate (ExtKeyUsageClientAuth).
	client bool
	// parent signs it; nil makes a self-signed CA.
	parent *issuedCert
}

// issuedCert is a certificate writeCert wrote, with its key.
type issuedCert struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// writeCert makes the certificate spec describes (ECDSA P-256, valid for
// a week) into certFile and its key into keyFile.
func writeCert(certFile, keyFile string, spec certSpec) (*issuedCert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate %s key: %w", spec.cn, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("generate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: spec.cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if spec.client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	for _, h := range spec.hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	parent, parentKey := tmpl, key
	if spec.parent == nil {
		// A CA's extended key usages bound its leaves': the apiserver's
		// certificate also signs the aggregator's client certificate.
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	} else {
		parent, parentKey = spec.parent.cert, spec.parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, fmt.Errorf("create %s certificate: %w", spec.cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse %s certificate: %w", spec.cn, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal %s key: %w", spec.cn, err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write %s certificate: %w", spec.cn, err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, fmt.Errorf("write %s key: %w", spec.cn, err)
	}
	return &issuedCert{cert: cert, key: key, pem: certPEM}, nil
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
