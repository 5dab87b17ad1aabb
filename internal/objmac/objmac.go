package objmac

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"sort"
)

// Annotation holds an object's MAC.
const Annotation = "redfish-bridge.io/mac"

// Key signs and verifies one purpose's objects. The zero Key signs
// nothing: [Key.Verify] is false for every MAC.
type Key struct{ k []byte }

// Derive is the key for purpose (e.g. "trust-configmap") under secret,
// the bridge's session key: HMAC-SHA256(secret, "redfish-bridge objmac "+purpose).
func Derive(secret []byte, purpose string) Key {
	if len(secret) == 0 {
		return Key{}
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("redfish-bridge objmac " + purpose))
	return Key{k: m.Sum(nil)}
}

// Valid reports whether k can sign (it was derived from a secret).
func (k Key) Valid() bool { return len(k.k) > 0 }

// Sum is the MAC of fields (identity first, then content) and data (a
// map, taken in key order), base64 (raw URL encoding). Every field and
// entry is length-prefixed, so no two inputs share an encoding.
func (k Key) Sum(fields []string, data map[string]string) string {
	if !k.Valid() {
		return ""
	}
	m := hmac.New(sha256.New, k.k)
	writeFields(m, fields, data)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Verify reports whether mac is [Key.Sum] of fields and data, in constant
// time. It is false for the zero Key and an empty mac.
func (k Key) Verify(mac string, fields []string, data map[string]string) bool {
	if !k.Valid() || mac == "" {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, k.k)
	writeFields(m, fields, data)
	return hmac.Equal(got, m.Sum(nil))
}

func writeFields(h hash.Hash, fields []string, data map[string]string) {
	var n [8]byte
	put := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], uint64(len(fields)))
	h.Write(n[:])
	for _, f := range fields {
		put(f)
	}
	keys := make([]string, 0, len(data))
	for key := range data {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	binary.BigEndian.PutUint64(n[:], uint64(len(keys)))
	h.Write(n[:])
	for _, key := range keys {
		put(key)
		put(data[key])
	}
}
