package virtapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// ErrNotServed means kube-apiserver does not serve subresources.kubevirt.io
// (no virt-api registered), so the bridge cannot force a VM.
var ErrNotServed = errors.New(kubevirt.SubresourceGroupVersion.String() + " not served (no virt-api in the cluster)")

// Client PUTs virt-api's VirtualMachine subresources. Safe for concurrent
// use.
type Client struct {
	rc rest.Interface
}

// New returns a Client for the cluster cfg points at, as cfg's identity
// (cfg is copied).
func New(cfg *rest.Config) (*Client, error) {
	c := rest.CopyConfig(cfg)
	gv := kubevirt.SubresourceGroupVersion
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion() // decodes the Status of an error
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("virt-api subresource client: %w", err)
	}
	return &Client{rc: rc}, nil
}

// ForceStop asks virt-api to stop VirtualMachine namespace/name's VMI with
// grace period 0 (PUT stop {"gracePeriod":0}). virt-api's 409 (under
// runStrategy Halted: no live VMI, or its grace period is not longer) is
// returned as is.
func (c *Client) ForceStop(ctx context.Context, namespace, name string) error {
	return c.put(ctx, namespace, name, kubevirt.SubresourceStop, kubevirt.ForceStopBody())
}

// ForceRestart asks virt-api for a forced restart of VirtualMachine
// namespace/name (PUT restart {"gracePeriodSeconds":0}: grace period 1,
// then Stop(uid)+Start).
func (c *Client) ForceRestart(ctx context.Context, namespace, name string) error {
	return c.put(ctx, namespace, name, kubevirt.SubresourceRestart, kubevirt.ForceRestartBody())
}

func (c *Client) put(ctx context.Context, namespace, name, sub string, body []byte) error {
	err := c.rc.Put().AbsPath(kubevirt.SubresourcePath(namespace, name, sub)).
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	if apierrors.IsNotFound(err) {
		served, derr := c.served(ctx)
		switch {
		case derr != nil:
			err = errors.Join(err, derr)
		case !served:
			err = ErrNotServed
		}
	}
	if patchTestFailed(err) {
		err = apierrors.NewConflict(kubevirt.VirtualMachines.GroupResource(), name, err)
	}
	if err != nil {
		return fmt.Errorf("virt-api %s of %s/%s: %w", sub, namespace, name, err)
	}
	return nil
}

// rejectedPatch is the text of the 500 virt-api answers when one of its
// JSON patches (the VMI's grace period, the VM's stateChangeRequests) no
// longer applies because the object changed between its read and its
// patch: virt-controller had just consumed a request. virt-api turns only
// an older json-patch library's "test operation does not apply" into its
// 409; kube-apiserver 1.37's refusal reaches it as this 422 text, wrapped
// in an InternalError.
const rejectedPatch = "the server rejected our request due to an error in our request"

// patchTestFailed reports whether err is that 500: the same conflict as
// virt-api's 409, not a failure of virt-api.
func patchTestFailed(err error) bool {
	return apierrors.IsInternalError(err) && strings.Contains(err.Error(), rejectedPatch)
}

// served reports whether kube-apiserver serves the subresource group's
// discovery document (404: no APIService for it).
func (c *Client) served(ctx context.Context) (bool, error) {
	err := c.rc.Get().AbsPath(kubevirt.SubresourceDiscoveryPath()).Do(ctx).Error()
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("discover %s: %w", kubevirt.SubresourceGroupVersion, err)
}
