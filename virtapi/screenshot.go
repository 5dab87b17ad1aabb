package virtapi

import (
	"context"
	"fmt"
	"io"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// MaxScreenshotBytes bounds a screenshot read from virt-api: a larger one
// is refused rather than held in memory (a 1280x800 PNG of a text screen
// is tens of KiB; an RGBA one uncompressed is 4 MiB).
const MaxScreenshotBytes = 4 << 20

// Screenshot GETs the PNG of the screen of the running VMI of System key
// (KubeVirt's vnc/screenshot subresource, through kube-apiserver to
// virt-api and on to virt-handler). A refused request's error wraps the
// apiserver's (or virt-api's) Status: a VM with no running VMI is
// refused, a missing grant is Forbidden. An image over
// [MaxScreenshotBytes] is an error.
func (c *Client) Screenshot(ctx context.Context, key system.Key) ([]byte, error) {
	body, err := c.rc.Get().AbsPath(kubevirt.VMISubresourcePath(key.Namespace, key.Name, kubevirt.ScreenshotSubresource)).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("screenshot of %s: %w", key, err)
	}
	defer body.Close()
	img, err := io.ReadAll(io.LimitReader(body, MaxScreenshotBytes+1))
	if err != nil {
		return nil, fmt.Errorf("screenshot of %s: %w", key, err)
	}
	if len(img) > MaxScreenshotBytes {
		return nil, fmt.Errorf("screenshot of %s: larger than %d bytes", key, MaxScreenshotBytes)
	}
	return img, nil
}
