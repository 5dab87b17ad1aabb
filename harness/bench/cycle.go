package bench

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/redfish-bridge/redfish-bridge/media"
)

// Operation names, in cycle order.
const (
	OpGetSystem = "GET System"
	OpForceOff  = "Reset ForceOff"
	OpInsert    = "InsertMedia"
	OpBootCd    = "PATCH Boot Cd/Once+UEFI"
	OpResetOn   = "Reset On"
	OpEject     = "EjectMedia"
	OpBootHdd   = "PATCH Boot Hdd/Continuous"
)

// MutatingOps are the operations that write.
var MutatingOps = []string{OpForceOff, OpInsert, OpBootCd, OpResetOn, OpEject, OpBootHdd}

// CycleOptions tune one provisioning cycle.
type CycleOptions struct {
	// Image is the ISO URL inserted.
	Image string
	// Poll is the PowerState polling interval (Ironic: 1 s).
	Poll time.Duration
	// PowerOnTimeout bounds the wait for PowerState On.
	PowerOnTimeout time.Duration
	// Between runs between two steps (the probe uses it to let background
	// work settle); nil for none.
	Between func(ctx context.Context, op string)
}

type systemBody struct {
	PowerState string `json:"PowerState"`
	Boot       struct {
		Target  string `json:"BootSourceOverrideTarget"`
		Enabled string `json:"BootSourceOverrideEnabled"`
		Mode    string `json:"BootSourceOverrideMode"`
	} `json:"Boot"`
}

type mediaBody struct {
	Inserted bool    `json:"Inserted"`
	Image    *string `json:"Image"`
}

func systemPath(id string) string { return "/redfish/v1/Systems/" + id }

func mediaPath(id string) string { return systemPath(id) + "/VirtualMedia/" + media.DefaultSlot }

// Cycle runs Ironic's virtual-media provisioning cycle on system id.
func Cycle(ctx context.Context, c *Client, id string, o CycleOptions) error {
	sys := systemPath(id)
	between := func(op string) {
		if o.Between != nil {
			o.Between(ctx, op)
		}
	}
	steps := []struct {
		op, method, path string
		body             any
	}{
		{OpGetSystem, http.MethodGet, sys, nil},
		{OpForceOff, http.MethodPost, sys + "/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"}},
		{OpInsert, http.MethodPost, mediaPath(id) + "/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": o.Image, "Inserted": true, "WriteProtected": true}},
		{OpBootCd, http.MethodPatch, sys, map[string]any{"Boot": map[string]string{
			"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}}},
		{OpResetOn, http.MethodPost, sys + "/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}},
	}
	for _, s := range steps {
		if err := c.Do(ctx, s.op, s.method, s.path, s.body, nil); err != nil {
			return fmt.Errorf("cycle %s: %w", id, err)
		}
		between(s.op)
	}
	if err := waitPowerOn(ctx, c, id, o); err != nil {
		return err
	}
	between(OpGetSystem)
	if err := c.Do(ctx, OpEject, http.MethodPost, mediaPath(id)+"/Actions/VirtualMedia.EjectMedia", map[string]any{}, nil); err != nil {
		return fmt.Errorf("cycle %s: %w", id, err)
	}
	between(OpEject)
	if err := c.Do(ctx, OpBootHdd, http.MethodPatch, sys, map[string]any{"Boot": map[string]string{
		"BootSourceOverrideTarget": "Hdd", "BootSourceOverrideEnabled": "Continuous"}}, nil); err != nil {
		return fmt.Errorf("cycle %s: %w", id, err)
	}
	between(OpBootHdd)
	return nil
}

func waitPowerOn(parent context.Context, c *Client, id string, o CycleOptions) error {
	ctx, cancel := context.WithTimeout(parent, o.PowerOnTimeout)
	defer cancel()
	t := time.NewTicker(o.Poll)
	defer t.Stop()
	for {
		var s systemBody
		if err := c.Do(ctx, OpGetSystem, http.MethodGet, systemPath(id), nil, &s); err != nil {
			return fmt.Errorf("cycle %s: poll power: %w", id, err)
		}
		if s.PowerState == "On" {
			return nil
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("cycle %s: PowerState %q when the load phase ended: %w", id, s.PowerState, parent.Err())
			}
			return fmt.Errorf("cycle %s: PowerState %q, not On within %s: %w", id, s.PowerState, o.PowerOnTimeout, ctx.Err())
		case <-t.C:
		}
	}
}

// Converged reports whether system id is in the cycle's final state: On,
// Boot Hdd/Continuous, no media. It records nothing.
func Converged(ctx context.Context, c *Client, id string) (bool, string, error) {
	var s systemBody
	if err := c.Do(ctx, "", http.MethodGet, systemPath(id), nil, &s); err != nil {
		return false, "", err
	}
	var m mediaBody
	if err := c.Do(ctx, "", http.MethodGet, mediaPath(id), nil, &m); err != nil {
		return false, "", err
	}
	ok := s.PowerState == "On" && s.Boot.Target == "Hdd" && s.Boot.Enabled == "Continuous" && !m.Inserted && m.Image == nil
	state := fmt.Sprintf("power=%s boot=%s/%s inserted=%t", s.PowerState, s.Boot.Target, s.Boot.Enabled, m.Inserted)
	return ok, state, nil
}
