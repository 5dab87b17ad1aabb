package objmac

import "testing"

// TestVerify: a MAC verifies only under the key and purpose it was made
// with, over the same identity and content; the zero Key verifies nothing.
func TestVerify(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	k := Derive(secret, "trust-configmap")
	fields := []string{"ns", "vm-media-cd0-tls", "uid-1"}
	data := map[string]string{"verifyCertificate": "true", "certificate-1": "pem"}
	mac := k.Sum(fields, data)
	if !k.Verify(mac, fields, data) {
		t.Fatal("a MAC does not verify its own input")
	}
	tests := []struct {
		name   string
		key    Key
		mac    string
		fields []string
		data   map[string]string
	}{
		{"content changed", k, mac, fields, map[string]string{"verifyCertificate": "false", "certificate-1": "pem"}},
		{"entry added", k, mac, fields, map[string]string{"verifyCertificate": "true", "certificate-1": "pem", "certificate-2": "x"}},
		{"entry removed", k, mac, fields, map[string]string{"verifyCertificate": "true"}},
		{"other owner UID", k, mac, []string{"ns", "vm-media-cd0-tls", "uid-2"}, data},
		{"fields shifted", k, mac, []string{"nsvm-media-cd0-tls", "", "uid-1"}, data},
		{"other purpose", Derive(secret, "image-cache-entry"), mac, fields, data},
		{"other secret", Derive([]byte("another secret of thirty-two bytes"), "trust-configmap"), mac, fields, data},
		{"zero key", Key{}, mac, fields, data},
		{"empty MAC", k, "", fields, data},
		{"not base64", k, "!!", fields, data},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.key.Verify(tt.mac, tt.fields, tt.data) {
				t.Error("verified")
			}
		})
	}
	if (Key{}).Sum(fields, data) != "" {
		t.Error("the zero Key signs")
	}
}
