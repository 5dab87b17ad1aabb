package media

import (
	"bytes"
	"errors"
	"fmt"
	"os"
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
