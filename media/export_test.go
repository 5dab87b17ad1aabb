package media

// CacheKey is cacheKey for the cluster tests of package media_test.
var CacheKey = cacheKey
