package media

// CacheKey is cacheKey for the cluster tests of package media_test.
var CacheKey = cacheKey

// TestCacheSecret is the image cache secret of the package's tests.
var TestCacheSecret = testCacheSecret
