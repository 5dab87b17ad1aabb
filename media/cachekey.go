package media

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// MinImageCacheKeyBytes is the shortest image cache secret accepted
// ([ReadImageCacheKey]): 32 random bytes, or 32 characters of a random
// hex or base64 string (`openssl rand -hex 32` makes 64).
const MinImageCacheKeyBytes = 32

// errNoCacheKey is an insert's error with the image cache on and no
// secret: a key without one could be tested offline (see [cacheKey]).
var errNoCacheKey = errors.New("the image cache is on without a secret key (SetImageCacheKey)")

// SetImageCacheKey sets the secret the image cache keys are an HMAC under
// (see [cacheKey]). Every replica must have the same one, and keep it
// across restarts: a key made under another secret names another entry,
// so entries are shared only under one secret. With the cache on and no
// secret, inserts fail.
func (s *Service) SetImageCacheKey(secret []byte) { s.cacheSecret = bytes.Clone(secret) }

// ReadImageCacheKey reads the image cache secret from the file at path
// (serve --image-cache-key-file; the chart mounts its Secret there):
// leading and trailing white space removed, at least
// [MinImageCacheKeyBytes] bytes.
func ReadImageCacheKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("image cache key: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < MinImageCacheKeyBytes {
		return nil, fmt.Errorf("image cache key %s: %d bytes, want at least %d random ones (e.g. openssl rand -hex 32)", path, len(b), MinImageCacheKeyBytes)
	}
	return b, nil
}

// cacheKeyLength is the key's length in hex characters (128 bits).
const cacheKeyLength = 32

// SetImageCache turns the image cache on for the inserts this Service
// accepts from now on (see the package doc).
func (s *Service) SetImageCache(on bool) { s.imageCache = on }

// cacheKey is the identity of what an insert downloads: the URL, whether
// the certificate is verified and against which CAs (ca: the PEM the
// import trusts besides the system roots), and who asks (the credentials).
// It is an HMAC-SHA256 under the bridge's secret ([Service.SetImageCacheKey]):
// the key shows in the slot annotation and the entry's name, and without
// the secret nobody can test guesses of a password against it offline.
// The credentials never leave the import Secret.
func cacheKey(secret []byte, url string, insecure bool, ca []byte, user, pass []byte) string {
	h := hmac.New(sha256.New, secret)
	field := func(b []byte) {
		h.Write([]byte(strconv.Itoa(len(b)) + ":"))
		h.Write(b)
	}
	field([]byte("redfish-bridge image cache v2"))
	field([]byte(url))
	field([]byte(strconv.FormatBool(insecure)))
	field(ca)
	field(user)
	field(pass)
	return hex.EncodeToString(h.Sum(nil))[:cacheKeyLength]
}

// cacheKeyOf is the insert's key, from what its import ConfigMap and
// Secret hold (data) and the slot's trust.
func cacheKeyOf(secret []byte, image string, fields system.MediaSlot, data map[string][]byte) string {
	return cacheKey(secret, image, fields.Insecure, data[download.CAKey], data[download.CredentialUserKey], data[download.CredentialPasswordKey])
}
