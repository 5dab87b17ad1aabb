package virtapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// ErrNoScreen means the VM has no running VMI, so no screen to take.
// virt-api v1.9 answers that (its VMI lookup's NotFound, its "VMI is not
// running" BadRequest) as a 500 whose body is the message alone.
var ErrNoScreen = errors.New("no running VMI: no screen")

// noScreenMessages are the messages of virt-api's 500 that mean
// [ErrNoScreen], each all of its parts (client-go quotes the body).
var noScreenMessages = [][]string{{"VMI is not running"}, {"virtualmachineinstance.kubevirt.io", "not found"}}

// refusedHint says what a refused screenshot lacks: virt-api answers its
// own SubjectAccessReview's denial with a bare 401, which client-go words
// as a request for credentials.
var refusedHint = "refused to the bridge's identity, which needs get on " + kubevirt.SubresourceGroupVersion.Group +
	" virtualmachineinstances/vnc and virtualmachineinstances/vnc/screenshot"

// MaxScreenshotBytes bounds a screenshot read from virt-api: a larger one
// is refused rather than held in memory (a 1280x800 PNG of a text screen
// is tens of KiB; an RGBA one uncompressed is 4 MiB).
const MaxScreenshotBytes = 4 << 20

// Screenshot GETs the PNG of the screen of the running VMI of System key
// (KubeVirt's vnc/screenshot subresource, through kube-apiserver to
// virt-api and on to virt-handler). A refused request's error wraps the
// apiserver's (or virt-api's) Status: a VM with no running VMI is
// [ErrNoScreen], a missing grant is Forbidden (kube-apiserver's) or
// Unauthorized (virt-api's), and says which grants are needed. An image over
// [MaxScreenshotBytes] is an error.
func (c *Client) Screenshot(ctx context.Context, key system.Key) ([]byte, error) {
	body, err := c.rc.Get().AbsPath(kubevirt.VMISubresourcePath(key.Namespace, key.Name, kubevirt.ScreenshotSubresource)).Stream(ctx)
	if err != nil && noScreen(err) {
		return nil, fmt.Errorf("screenshot of %s: %w: %w", key, ErrNoScreen, err)
	}
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("screenshot of %s: %s: %w", key, refusedHint, err)
	}
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

// noScreen reports whether err is virt-api's answer for a VM with no
// running VMI.
func noScreen(err error) bool {
	if apierrors.IsNotFound(err) || apierrors.IsBadRequest(err) {
		return true
	}
	if !apierrors.IsInternalError(err) {
		return false
	}
	msg := err.Error()
	return slices.ContainsFunc(noScreenMessages, func(parts []string) bool {
		return !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(msg, p) })
	})
}
