package media

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// testCacheSecret is the image cache secret of this package's tests.
var testCacheSecret = []byte("redfish-bridge media tests' image cache secret, 0123456789")

// bareKey is the image cache key as it was before the HMAC (a bare sha256
// of the same fields, from the public source): what an attacker computes.
func bareKey(url string, insecure bool, ca, user, pass []byte) string {
	h := sha256.New()
	for _, b := range [][]byte{[]byte("redfish-bridge image cache v1"), []byte(url), []byte(strconv.FormatBool(insecure)), ca, user, pass} {
		h.Write([]byte(strconv.Itoa(len(b)) + ":"))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:cacheKeyLength]
}

// TestCacheKeyOfflineGuess performs the attack on the image cache key: a
// reader of the namespace sees an insert's entry (the PVC name
// redfish-image-<key>, or the slot annotation's cacheKey), its URL and
// VerifyCertificate (the slot annotation) and its user, and tests a
// dictionary of passwords offline, with every way of computing the key it
// has without the bridge's secret. None may find the password; the bare
// hash the key was before finds it.
func TestCacheKeyOfflineGuess(t *testing.T) {
	const url = "https://images.example/ipa.iso"
	user, password := []byte("ironic"), []byte("summer2024")
	dictionary := strings.Fields("123456 password ironic admin letmein summer2023 summer2024 winter2024")
	slot := system.MediaSlot{}
	data := map[string][]byte{download.CredentialUserKey: user, download.CredentialPasswordKey: password}
	guess := func(seen string, key func(pass []byte) string) string {
		for _, p := range dictionary {
			if CacheClaimName(key([]byte(p))) == seen {
				return p
			}
		}
		return ""
	}
	seen := CacheClaimName(cacheKeyOf(testCacheSecret, url, slot, data))
	for _, tc := range []struct {
		name string
		seen string // the entry name the attacker reads
		key  func(pass []byte) string
		want string // the password found ("": none)
	}{
		{"the bare sha256 key of before: found", CacheClaimName(bareKey(url, false, nil, user, password)),
			func(p []byte) string { return bareKey(url, false, nil, user, p) }, string(password)},
		{"bare sha256", seen, func(p []byte) string { return bareKey(url, false, nil, user, p) }, ""},
		{"HMAC without a secret", seen, func(p []byte) string { return cacheKey(nil, url, false, nil, user, p) }, ""},
		{"HMAC under another secret", seen, func(p []byte) string {
			return cacheKey([]byte("the attacker's guess at the bridge's secret, 0123456789"), url, false, nil, user, p)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := guess(tc.seen, tc.key); got != tc.want {
				t.Errorf("a dictionary of %d passwords against %s found %q, want %q", len(dictionary), tc.seen, got, tc.want)
			}
		})
	}
}

// TestCacheKeySecret: replicas reading the same secret agree on the key
// (entries are shared); another secret gives another key.
func TestCacheKeySecret(t *testing.T) {
	const url = "https://images.example/ipa.iso"
	key := func(secret []byte) string {
		return cacheKey(secret, url, false, []byte("CA"), []byte("u"), []byte("p"))
	}
	k := key(testCacheSecret)
	if diff := cmp.Diff(k, key(bytes.Clone(testCacheSecret))); diff != "" {
		t.Errorf("same secret, another key (-first +second):\n%s", diff)
	}
	other := append(bytes.Clone(testCacheSecret), '!')
	if key(other) == k {
		t.Errorf("another secret, the same key %s", k)
	}
	if len(k) != cacheKeyLength {
		t.Errorf("key %q: %d characters, want %d", k, len(k), cacheKeyLength)
	}
}

// TestReadImageCacheKey: the key file's secret, white space trimmed (a
// Secret made with kubectl --from-file keeps the newline), refused when
// missing or short.
func TestReadImageCacheKey(t *testing.T) {
	dir := t.TempDir()
	secret := strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		name, content string
		want          string // the secret read
		wantErr       string
	}{
		{name: "hex", content: secret, want: secret},
		{name: "trailing newline", content: secret + "\n", want: secret},
		{name: "short", content: "0123456789abcdef0123456789abcde\n", wantErr: "31 bytes, want at least 32"},
		{name: "empty", content: "", wantErr: "0 bytes"},
		{name: "missing", wantErr: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if tc.name != "missing" {
				if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadImageCacheKey(path)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if diff := cmp.Diff(tc.want, string(got)); diff != "" {
					t.Errorf("secret (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestCacheKey: a different URL, trust or credential is a different entry.
func TestCacheKey(t *testing.T) {
	base := func() (string, bool, []byte, []byte, []byte) {
		return "https://img/a.iso", false, []byte("CA-1"), []byte("user"), []byte("pass")
	}
	key := func(url string, insecure bool, ca, user, pass []byte) string {
		return cacheKey(testCacheSecret, url, insecure, ca, user, pass)
	}
	k0 := key(base())
	for _, tc := range []struct {
		name string
		key  string
	}{
		{"url", func() string { _, i, c, u, p := base(); return key("https://img/b.iso", i, c, u, p) }()},
		{"verify certificate", func() string { s, _, c, u, p := base(); return key(s, true, c, u, p) }()},
		{"ca", func() string { s, i, _, u, p := base(); return key(s, i, []byte("CA-2"), u, p) }()},
		{"no ca", func() string { s, i, _, u, p := base(); return key(s, i, nil, u, p) }()},
		{"user", func() string { s, i, c, _, p := base(); return key(s, i, c, []byte("other"), p) }()},
		{"password", func() string { s, i, c, u, _ := base(); return key(s, i, c, u, []byte("other")) }()},
		{"field boundary", func() string { s, i, c, _, _ := base(); return key(s, i, c, []byte("userp"), []byte("ass")) }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.key == k0 {
				t.Errorf("same key %s as the base insert", k0)
			}
		})
	}
	if diff := cmp.Diff(k0, key(base())); diff != "" {
		t.Errorf("key not deterministic (-first +second):\n%s", diff)
	}
	if name := CacheClaimName(k0); len(name) > 63 || bytes.Contains([]byte(name), []byte("pass")) {
		t.Errorf("entry name %q", name)
	}
}
