package ipmi

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // RAKP-HMAC-SHA1 is what IPMI v2.0 cipher suite 3 is
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
)

// Algorithm numbers of the Open Session payloads (IPMI v2.0 tables 13-17..19).
const (
	authRAKPNone       = 0x00
	authRAKPHMACSHA1   = 0x01
	authRAKPHMACSHA256 = 0x03

	integrityNone          = 0x00
	integrityHMACSHA196    = 0x01
	integrityHMACSHA256128 = 0x04

	confNone      = 0x00
	confAESCBC128 = 0x01
)

// suite is one cipher suite the endpoint offers.
type suite struct {
	id                    byte
	auth, integrity, conf byte
	// newHash is the hash of RAKP's HMACs and of the integrity check.
	newHash func() hash.Hash
	// rakp4Len is the length of RAKP 4's integrity check value, icvLen
	// the length of a packet's AuthCode (both truncated HMACs).
	rakp4Len, icvLen int
}

// suites are the cipher suites served: 17 (ipmitool's choice when
// offered) and 3. Nothing without integrity and confidentiality.
var suites = []suite{
	{id: 17, auth: authRAKPHMACSHA256, integrity: integrityHMACSHA256128, conf: confAESCBC128, newHash: sha256.New, rakp4Len: 16, icvLen: 16},
	{id: 3, auth: authRAKPHMACSHA1, integrity: integrityHMACSHA196, conf: confAESCBC128, newHash: sha1.New, rakp4Len: 12, icvLen: 12},
}

// suiteRecords is the Get Channel Cipher Suites answer: one "standard
// cipher suite" record (0xC0) per suite.
func suiteRecords() []byte {
	var out []byte
	for _, s := range suites {
		out = append(out, 0xC0, s.id, s.auth, 0x40|s.integrity, 0x80|s.conf)
	}
	return out
}

// Open Session status codes for algorithms (IPMI v2.0 table 13-15).
const (
	statusOK                  = 0x00
	statusNoResources         = 0x01
	statusInvalidSessionID    = 0x02
	statusInvalidAuthAlg      = 0x04
	statusInvalidIntegrityAlg = 0x05
	statusInvalidRole         = 0x09
	statusUnauthorizedRole    = 0x0A
	statusInvalidNameLength   = 0x0C
	statusUnauthorizedName    = 0x0D
	statusInvalidICV          = 0x0F
	statusInvalidConfAlg      = 0x10
	statusNoCipherSuiteMatch  = 0x11
	statusIllegalParameter    = 0x12
)

// pickSuite returns the suite with exactly these algorithms, or the status
// that refuses them: cipher suite 0 (RAKP-none) and anything without
// integrity or AES are refused.
func pickSuite(auth, integrity, conf byte) (suite, byte) {
	var authOK, integOK, confOK bool
	for _, s := range suites {
		if s.auth == auth && s.integrity == integrity && s.conf == conf {
			return s, statusOK
		}
		authOK = authOK || s.auth == auth
		integOK = integOK || s.integrity == integrity
		confOK = confOK || s.conf == conf
	}
	switch {
	case !authOK:
		return suite{}, statusInvalidAuthAlg
	case !integOK:
		return suite{}, statusInvalidIntegrityAlg
	case !confOK:
		return suite{}, statusInvalidConfAlg
	}
	return suite{}, statusNoCipherSuiteMatch
}

// mac is HMAC(key, parts...) with the suite's hash.
func (s suite) mac(key []byte, parts ...[]byte) []byte {
	h := hmac.New(s.newHash, key)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// kuid is the user key K_UID of RAKP: the password zero-padded to 20
// bytes (ipmitool keys every HMAC of RAKP with these 20 bytes, SHA-256 too).
func kuid(password []byte) []byte {
	k := make([]byte, 20)
	copy(k, password)
	return k
}

// keys are a session's keys derived from its SIK.
type keys struct {
	k1  []byte // integrity key
	aes []byte // first 16 bytes of K2
}

// deriveKeys computes K1 and K2 from the session integrity key.
func (s suite) deriveKeys(sik []byte) keys {
	k1 := s.mac(sik, bytes.Repeat([]byte{0x01}, 20))
	k2 := s.mac(sik, bytes.Repeat([]byte{0x02}, 20))
	return keys{k1: k1, aes: k2[:16]}
}

// errDecrypt is returned for a confidential payload that does not decrypt.
var errDecrypt = errors.New("payload does not decrypt")

// encrypt returns IV + AES-CBC-128(payload + pad 1,2,..,n + n).
func encrypt(key, payload []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("aes key: %w", err)
	}
	padLen := (aes.BlockSize - (len(payload)+1)%aes.BlockSize) % aes.BlockSize
	plain := make([]byte, 0, len(payload)+padLen+1)
	plain = append(plain, payload...)
	for i := 1; i <= padLen; i++ {
		plain = append(plain, byte(i))
	}
	plain = append(plain, byte(padLen))
	iv := make([]byte, aes.BlockSize)
	if _, err := rand.Read(iv); err != nil {
		return nil, fmt.Errorf("iv: %w", err)
	}
	out := make([]byte, aes.BlockSize+len(plain))
	copy(out, iv)
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(out[aes.BlockSize:], plain)
	return out, nil
}

// decrypt is the inverse of encrypt; it checks the padding.
func decrypt(key, data []byte) ([]byte, error) {
	if len(data) < 2*aes.BlockSize || len(data)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("%w: %d bytes", errDecrypt, len(data))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("aes key: %w", err)
	}
	plain := make([]byte, len(data)-aes.BlockSize)
	cipher.NewCBCDecrypter(block, data[:aes.BlockSize]).CryptBlocks(plain, data[aes.BlockSize:])
	padLen := int(plain[len(plain)-1])
	if padLen >= aes.BlockSize || padLen+1 > len(plain) {
		return nil, fmt.Errorf("%w: pad length %d", errDecrypt, padLen)
	}
	body := plain[:len(plain)-1-padLen]
	for i, p := range plain[len(body) : len(plain)-1] {
		if int(p) != i+1 {
			return nil, fmt.Errorf("%w: bad pad", errDecrypt)
		}
	}
	return body, nil
}
