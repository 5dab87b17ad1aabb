package ironicproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// APIVersion is the microversion the client asks for: Ironic 21.4's newest
// (boot mode and Secure Boot state changes need 1.76).
const APIVersion = "1.82"

// Client drives Ironic's REST API (noauth).
type Client struct {
	URL string
	HC  *http.Client
	// Version is the microversion asked for ([APIVersion] when "").
	Version string
}

// NewClient returns a client of the API at url.
func NewClient(url string) *Client {
	return &Client{URL: url, HC: &http.Client{Timeout: 90 * time.Second}}
}

// APIError is a non-2xx answer of the API.
type APIError struct {
	Method, Path string
	Status       int
	// Fault is Ironic's faultstring (the raw body if it had none).
	Fault string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("ironic %s %s: %d: %s", e.Method, e.Path, e.Status, e.Fault)
}

// Do sends body (JSON, when not nil) and decodes the answer into out (when
// not nil). A 500 "database is locked" (sqlite under concurrent writers:
// nothing was changed) is retried a few times, and so is a 409 "is locked
// by host" (a conductor task such as the power sync holds the node; Ironic
// 39's hold seconds on a loaded machine), as python-ironicclient does.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	for attempt := 1; ; attempt++ {
		err := c.do(ctx, method, path, body, out)
		var e *APIError
		if !errors.As(err, &e) {
			return err
		}
		dbLocked := e.Status == http.StatusInternalServerError && strings.Contains(e.Fault, "database is locked") && attempt < 5
		nodeLocked := e.Status == http.StatusConflict && strings.Contains(e.Fault, "is locked by host") && attempt < 30
		if !dbLocked && !nodeLocked {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(min(time.Duration(attempt)*300*time.Millisecond, 2*time.Second)):
		}
	}
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode ironic %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return fmt.Errorf("ironic %s %s: %w", method, path, err)
	}
	v := c.Version
	if v == "" {
		v = APIVersion
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", v)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HC.Do(req)
	if err != nil {
		return fmt.Errorf("ironic %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("ironic %s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &APIError{Method: method, Path: path, Status: resp.StatusCode, Fault: faultOf(raw)}
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("ironic %s %s: decode %q: %w", method, path, raw, err)
	}
	return nil
}

// faultOf digs the faultstring out of an error body: Ironic nests it as a
// JSON string in error_message.
func faultOf(raw []byte) string {
	var outer struct {
		ErrorMessage json.RawMessage `json:"error_message"`
	}
	if json.Unmarshal(raw, &outer) != nil || outer.ErrorMessage == nil {
		return string(raw)
	}
	var inner struct {
		Faultstring string `json:"faultstring"`
	}
	var s string
	if json.Unmarshal(outer.ErrorMessage, &s) == nil {
		if json.Unmarshal([]byte(s), &inner) == nil && inner.Faultstring != "" {
			return inner.Faultstring
		}
		return s
	}
	if json.Unmarshal(outer.ErrorMessage, &inner) == nil && inner.Faultstring != "" {
		return inner.Faultstring
	}
	return string(raw)
}

// IsStatus reports whether err is an [APIError] with that status.
func IsStatus(err error, status int) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == status
}

// Node is the part of an Ironic node the tests read.
type Node struct {
	UUID                 string         `json:"uuid"`
	Name                 string         `json:"name"`
	ProvisionState       string         `json:"provision_state"`
	TargetProvisionState *string        `json:"target_provision_state"`
	PowerState           *string        `json:"power_state"`
	TargetPowerState     *string        `json:"target_power_state"`
	LastError            *string        `json:"last_error"`
	Maintenance          bool           `json:"maintenance"`
	MaintenanceReason    *string        `json:"maintenance_reason"`
	Reservation          *string        `json:"reservation"`
	BootMode             *string        `json:"boot_mode"`
	SecureBoot           *bool          `json:"secure_boot"`
	Properties           map[string]any `json:"properties"`
	DriverInfo           map[string]any `json:"driver_info"`
	InstanceInfo         map[string]any `json:"instance_info"`
	DriverInternalInfo   map[string]any `json:"driver_internal_info"`
	// Health is Status.Health as the conductor last read it (API 1.109).
	Health *string `json:"health"`
}

// Str is *s, or "" when nil (Ironic's nullable strings).
func Str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Summary is the node's states in one line, for logs and failures.
func (n Node) Summary() string {
	sb := "nil"
	if n.SecureBoot != nil {
		sb = fmt.Sprint(*n.SecureBoot)
	}
	return fmt.Sprintf("provision %q (target %q) power %q (target %q) boot_mode %q secure_boot %s maintenance %v %q reservation %q last_error %q",
		n.ProvisionState, Str(n.TargetProvisionState), Str(n.PowerState), Str(n.TargetPowerState),
		Str(n.BootMode), sb, n.Maintenance, Str(n.MaintenanceReason), Str(n.Reservation), Str(n.LastError))
}

// Stable reports whether no provision or power change is in flight and no
// conductor holds the node.
func (n Node) Stable() bool {
	return Str(n.TargetProvisionState) == "" && Str(n.TargetPowerState) == "" && Str(n.Reservation) == ""
}

// CreateNode enrolls a node.
func (c *Client) CreateNode(ctx context.Context, body map[string]any) (Node, error) {
	var n Node
	return n, c.Do(ctx, http.MethodPost, "/v1/nodes", body, &n)
}

// Node reads a node by UUID or name.
func (c *Client) Node(ctx context.Context, id string) (Node, error) {
	var n Node
	return n, c.Do(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(id), nil, &n)
}

// PatchNode applies JSON-patch ops ({"op","path","value"}).
func (c *Client) PatchNode(ctx context.Context, id string, ops ...map[string]any) (Node, error) {
	var n Node
	return n, c.Do(ctx, http.MethodPatch, "/v1/nodes/"+url.PathEscape(id), ops, &n)
}

// DeleteNode deletes a node.
func (c *Client) DeleteNode(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/v1/nodes/"+url.PathEscape(id), nil, nil)
}

// Provision asks for a provision state change (manage, provide, inspect,
// clean, active, rebuild, deleted, abort); extra is merged into the body
// (clean_steps, ...).
func (c *Client) Provision(ctx context.Context, id, target string, extra map[string]any) error {
	body := map[string]any{"target": target}
	for k, v := range extra {
		body[k] = v
	}
	return c.Do(ctx, http.MethodPut, "/v1/nodes/"+url.PathEscape(id)+"/states/provision", body, nil)
}

// Power asks for "power on", "power off" or "rebooting".
func (c *Client) Power(ctx context.Context, id, target string) error {
	return c.Do(ctx, http.MethodPut, "/v1/nodes/"+url.PathEscape(id)+"/states/power", map[string]any{"target": target}, nil)
}

// SetMaintenance puts the node into maintenance (with reason) or takes it
// out.
func (c *Client) SetMaintenance(ctx context.Context, id string, on bool, reason string) error {
	path := "/v1/nodes/" + url.PathEscape(id) + "/maintenance"
	if !on {
		return c.Do(ctx, http.MethodDelete, path, nil, nil)
	}
	return c.Do(ctx, http.MethodPut, path, map[string]any{"reason": reason}, nil)
}

// BootDevice is Ironic's view of a node's boot device.
type BootDevice struct {
	BootDevice *string `json:"boot_device"`
	Persistent *bool   `json:"persistent"`
}

// SetBootDevice sets the boot device (pxe, disk, cdrom, ...).
func (c *Client) SetBootDevice(ctx context.Context, id, device string, persistent bool) error {
	return c.Do(ctx, http.MethodPut, "/v1/nodes/"+url.PathEscape(id)+"/management/boot_device",
		map[string]any{"boot_device": device, "persistent": persistent}, nil)
}

// GetBootDevice reads the boot device back from the BMC.
func (c *Client) GetBootDevice(ctx context.Context, id string) (BootDevice, error) {
	var d BootDevice
	return d, c.Do(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(id)+"/management/boot_device", nil, &d)
}

// SupportedBootDevices lists the boot devices the driver offers.
func (c *Client) SupportedBootDevices(ctx context.Context, id string) ([]string, error) {
	var out struct {
		SupportedBootDevices []string `json:"supported_boot_devices"`
	}
	return out.SupportedBootDevices, c.Do(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(id)+"/management/boot_device/supported", nil, &out)
}

// SetBootMode asks for "uefi" or "bios" (asynchronous).
func (c *Client) SetBootMode(ctx context.Context, id, mode string) error {
	return c.Do(ctx, http.MethodPut, "/v1/nodes/"+url.PathEscape(id)+"/states/boot_mode", map[string]any{"target": mode}, nil)
}

// SetSecureBoot asks for Secure Boot on or off (asynchronous).
func (c *Client) SetSecureBoot(ctx context.Context, id string, on bool) error {
	return c.Do(ctx, http.MethodPut, "/v1/nodes/"+url.PathEscape(id)+"/states/secure_boot", map[string]any{"target": on}, nil)
}

// InjectNMI asks for a non-maskable interrupt.
func (c *Client) InjectNMI(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodPut, "/v1/nodes/"+url.PathEscape(id)+"/management/inject_nmi", map[string]any{}, nil)
}

// VendorPassthru calls the node's vendor passthru method (the redfish
// vendor interface's create_subscription, get_all_subscriptions,
// get_subscription, delete_subscription) with HTTP method verb, body
// (the method's arguments, nil for none) and decodes its answer into out.
func (c *Client) VendorPassthru(ctx context.Context, id, verb, method string, body, out any) error {
	return c.Do(ctx, verb, "/v1/nodes/"+url.PathEscape(id)+"/vendor_passthru?method="+url.QueryEscape(method), body, out)
}

// AttachVMedia asks the conductor to attach the image at imageURL as a
// virtual device (device "cdrom", "disk" or "floppy"; API 1.89) the way
// baremetal-operator attaches a DataImage: the conductor downloads the
// image and serves its own copy (image_download_source "local", Ironic's
// default). Ironic answers 204 and works on in the background, holding the
// node's lock: a failure shows in last_error.
func (c *Client) AttachVMedia(ctx context.Context, id, device, imageURL string) error {
	return c.Do(ctx, http.MethodPost, "/v1/nodes/"+url.PathEscape(id)+"/vmedia",
		map[string]any{"device_type": device, "image_url": imageURL}, nil)
}

// DetachVMedia asks the conductor to eject the node's virtual devices of
// the given types, every one when none is given (API 1.89; asynchronous
// like [Client.AttachVMedia]).
func (c *Client) DetachVMedia(ctx context.Context, id string, devices ...string) error {
	path := "/v1/nodes/" + url.PathEscape(id) + "/vmedia"
	if len(devices) > 0 {
		path += "?device_types=" + url.QueryEscape(strings.Join(devices, ","))
	}
	return c.Do(ctx, http.MethodDelete, path, nil, nil)
}

// Port is an Ironic port.
type Port struct {
	UUID    string `json:"uuid"`
	Address string `json:"address"`
}

// Ports lists the node's ports.
func (c *Client) Ports(ctx context.Context, nodeUUID string) ([]Port, error) {
	var out struct {
		Ports []Port `json:"ports"`
	}
	return out.Ports, c.Do(ctx, http.MethodGet, "/v1/ports?node_uuid="+url.QueryEscape(nodeUUID), nil, &out)
}

// Inventory is the node's inspection inventory (API 1.81) and plugin data.
type Inventory struct {
	Inventory  map[string]any `json:"inventory"`
	PluginData map[string]any `json:"plugin_data"`
}

// NodeInventory reads what the node's last inspection stored.
func (c *Client) NodeInventory(ctx context.Context, id string) (Inventory, error) {
	var inv Inventory
	return inv, c.Do(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(id)+"/inventory", nil, &inv)
}

// WaitNode polls the node every second until done says so (returning the
// node) or ctx ends (returning the last node read and the reason).
func (c *Client) WaitNode(ctx context.Context, id string, done func(Node) bool) (Node, error) {
	var n Node
	var last error
	for {
		got, err := c.Node(ctx, id)
		if err == nil {
			n, last = got, nil
			if done(n) {
				return n, nil
			}
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return n, fmt.Errorf("wait for node %s: %w (last read: %w)", id, ctx.Err(), last)
			}
			return n, fmt.Errorf("wait for node %s: %w; last: %s", id, ctx.Err(), n.Summary())
		case <-time.After(time.Second):
		}
	}
}
