package download

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

const mi = 1 << 20

// minClaimBytes is the smallest PVC the bridge asks for.
const minClaimBytes = 64 * mi

// Image size bounds. [DefaultMaxImageSize] is what an import may write
// unless configured otherwise; no configuration may raise it above
// [MaxImageSizeLimit], which keeps every PVC size computation far from
// int64 overflow.
const (
	DefaultMaxImageSize int64 = 64 << 30 // 64Gi
	MaxImageSizeLimit   int64 = 1 << 50  // 1Pi
)

// ClaimSize turns an image size in bytes (<= 0: not known yet) into a PVC
// request: the size plus 10% (filesystem overhead) rounded up to a whole
// Mi, at least 64Mi; def when the size is not known. Sizes above
// [MaxImageSizeLimit] count as that limit (the importer refuses them before
// any PVC is sized for them), so the arithmetic never overflows.
func ClaimSize(imageBytes int64, def resource.Quantity) resource.Quantity {
	if imageBytes <= 0 {
		return def.DeepCopy()
	}
	return *resource.NewQuantity(claimBytes(min(imageBytes, MaxImageSizeLimit)), resource.BinarySI)
}

// claimBytes is ClaimSize in bytes for 0 < n <= MaxImageSizeLimit.
func claimBytes(n int64) int64 {
	want := n + (n+9)/10
	want = (want + mi - 1) / mi * mi
	return max(want, minClaimBytes)
}

// ClaimRoom is the largest image a PVC requesting claim holds: the largest
// n with ClaimSize(n) <= claim (0 when even the smallest image needs a
// larger PVC). The importer answers an image larger than this with a
// [*NeedRoomError], and the reconciler re-creates the PVC at ClaimSize of
// that image, which is then strictly larger than claim: resizing always
// makes progress.
func ClaimRoom(claim resource.Quantity) int64 {
	c := claim.Value() // saturates at MaxInt64
	if c < minClaimBytes {
		return 0
	}
	// claimBytes is nondecreasing: binary search its last n <= c.
	lo, hi := int64(0), min(c, MaxImageSizeLimit)
	for lo < hi {
		m := lo + (hi-lo+1)/2
		if claimBytes(m) <= c {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// ParseImageSize reads a size such as "64Gi" for the maximum image size:
// at least 1Mi and at most [MaxImageSizeLimit].
func ParseImageSize(s string) (int64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("image size %q: %w", s, err)
	}
	lo, hi := resource.NewQuantity(mi, resource.BinarySI), resource.NewQuantity(MaxImageSizeLimit, resource.BinarySI)
	if q.Cmp(*lo) < 0 || q.Cmp(*hi) > 0 {
		return 0, fmt.Errorf("image size %q: must be between 1Mi and %s", s, FormatBytes(MaxImageSizeLimit))
	}
	return q.Value(), nil
}

// FormatBytes writes n as a Kubernetes binary quantity ("64Gi",
// "1127Mi", "12345").
func FormatBytes(n int64) string {
	return resource.NewQuantity(n, resource.BinarySI).String()
}
