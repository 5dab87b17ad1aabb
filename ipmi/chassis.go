package ipmi

import (
	"context"
	"errors"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Chassis commands (netFn Chassis).
const (
	cmdGetChassisStatus   = 0x01
	cmdChassisControl     = 0x02
	cmdSetSystemBootOpts  = 0x08
	cmdGetSystemBootOpts  = 0x09
	controlPowerDown      = 0x00
	controlPowerUp        = 0x01
	controlPowerCycle     = 0x02
	controlHardReset      = 0x03
	controlSoftShutdown   = 0x05
	chassisStatusPowerOn  = 0x01
	chassisPolicyPrevious = 0x40 // power restore policy "previous state": what the VM does
)

// chassisCommand runs a chassis command inside a session.
func (e *endpoint) chassisCommand(ctx context.Context, sess *session, req request) (byte, []byte) {
	sess.mu.Lock()
	priv := sess.priv
	sess.mu.Unlock()
	switch req.cmd {
	case cmdGetChassisStatus:
		st, err := e.srv.backend.State(ctx, e.key)
		if err != nil {
			return e.failed(ctx, "chassis status", err), nil
		}
		b := byte(chassisPolicyPrevious)
		if poweredOn(st.PowerState) {
			b |= chassisStatusPowerOn
		}
		return ccOK, []byte{b, 0x00, 0x00}
	case cmdChassisControl:
		if priv < privOperator {
			return ccInsufficientPriv, nil
		}
		if len(req.data) != 1 {
			return ccRequestLength, nil
		}
		return e.chassisControl(ctx, req.data[0]&0x0F), nil
	case cmdSetSystemBootOpts:
		if priv < privOperator {
			return ccInsufficientPriv, nil
		}
		return e.setBootOptions(ctx, req.data), nil
	case cmdGetSystemBootOpts:
		return e.getBootOptions(ctx, req.data)
	}
	return ccInvalidCommand, nil
}

// chassisControl maps Chassis Control to the Redfish reset verbs.
func (e *endpoint) chassisControl(ctx context.Context, control byte) byte {
	var kind system.ResetType
	switch control {
	case controlPowerDown:
		kind = system.ResetForceOff
	case controlPowerUp:
		kind = system.ResetOn
	case controlPowerCycle:
		// A cycle of a system that is off does nothing (IPMI v2.0 28.3).
		st, err := e.srv.backend.State(ctx, e.key)
		if err != nil {
			return e.failed(ctx, "chassis control", err)
		}
		if !poweredOn(st.PowerState) {
			return ccNotInPresentState
		}
		kind = system.ResetForceRestart
	case controlHardReset:
		kind = system.ResetForceRestart
	case controlSoftShutdown:
		kind = system.ResetGracefulShutdown
	default:
		return ccInvalidData // diagnostic interrupt: KubeVirt cannot inject an NMI
	}
	if err := e.srv.backend.Reset(ctx, e.key, kind); err != nil {
		return e.failed(ctx, "chassis control", err)
	}
	logctx.From(ctx).InfoContext(ctx, "ipmi: chassis control", "system", e.key.String(), "reset", string(kind))
	return ccOK
}

// failed logs a backend error and returns its completion code: a value
// the system refuses now is "cannot execute in present state".
func (e *endpoint) failed(ctx context.Context, what string, err error) byte {
	logctx.From(ctx).WarnContext(ctx, "ipmi: "+what+" failed", "system", e.key.String(), "error", err.Error())
	if errors.Is(err, ErrRefused) {
		return ccNotInPresentState
	}
	return ccUnspecified
}

func poweredOn(s system.PowerState) bool {
	return s == system.PowerOn || s == system.PowerPoweringOff || s == system.PowerPaused
}
