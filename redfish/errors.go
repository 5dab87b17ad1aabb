package redfish

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// Errors the backends return (wrapped); the service maps them to HTTP.
var (
	// ErrNotFound: the system (or slot) does not exist. 404.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the resource is in use or in transition, e.g. a
	// Kubernetes write conflict that outlived the retries. 409.
	ErrConflict = errors.New("resource in use")
	// ErrPreconditionFailed: the resource changed since the version the
	// client's If-Match names. 412.
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrUnavailable: the backend cannot answer now (cache not synced,
	// apiserver unreachable). 503 with Retry-After.
	ErrUnavailable = errors.New("temporarily unavailable")
	// ErrNotSupported: the request is valid Redfish but this bridge cannot
	// do it. 501.
	ErrNotSupported = errors.New("not supported")
)

// BadValueError says a request value is not acceptable. 400
// PropertyValueNotInList, or ActionParameterValueFormatError for an action
// parameter; Reason, when set, is the Resolution.
type BadValueError struct {
	Property string // Redfish property name, e.g. "ResetType"
	Value    string
	Reason   string
}

func (e *BadValueError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("value %q of %s: %s", e.Value, e.Property, e.Reason)
	}
	return fmt.Sprintf("value %q of %s is not acceptable", e.Value, e.Property)
}

// RefusedValueError says a valid value cannot be written in the system's
// current state. 400 PropertyValueConflict when ConflictsWith names the
// property in the way, else PropertyValueIncorrect; Resolution, shown to
// the client, says what to do.
type RefusedValueError struct {
	Property, Value string
	ConflictsWith   string
	Resolution      string
}

func (e *RefusedValueError) Error() string {
	return fmt.Sprintf("value %q of %s refused: %s", e.Value, e.Property, e.Resolution)
}

// message is the Redfish message of the refusal.
func (e *RefusedValueError) message() Message {
	related := []string{"#/" + e.Property}
	m := msg("PropertyValueIncorrect", related, e.Property, e.Value)
	if e.ConflictsWith != "" {
		m = msg("PropertyValueConflict", related, e.Property, e.ConflictsWith)
	}
	m.Resolution = e.Resolution
	return m
}

// ConflictError says why a resource is in use or in transition. 409
// ResourceInUse, with Resolution (what the client does next) shown to the
// client; it matches [ErrConflict].
type ConflictError struct {
	Resolution string
}

func (e *ConflictError) Error() string { return "resource in use: " + e.Resolution }

// Is makes a ConflictError an [ErrConflict].
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// ActionConflictError is an action refused for now because the resource is
// in a transition its parameter conflicts with (a power-on while the system
// is still powering off): 409 ActionParameterValueConflict naming the
// parameter and its value, with Resolution shown to the client. The same
// request succeeds once the transition ends; Ironic 39 retries a power-on
// on exactly this message. It matches [ErrConflict].
type ActionConflictError struct {
	Parameter, Value string
	Resolution       string
}

func (e *ActionConflictError) Error() string {
	return fmt.Sprintf("%s %s conflicts with the resource's state: %s", e.Parameter, e.Value, e.Resolution)
}

// Is makes an ActionConflictError an [ErrConflict].
func (e *ActionConflictError) Is(target error) bool { return target == ErrConflict }

// conflictResolution is the Resolution of a 409 no [ConflictError] explains:
// a Kubernetes write conflict that outlived the bridge's retries.
const conflictResolution = "The system changed while the request ran. Retry the request."

// Error is a complete Redfish error answer: status, messages, headers.
type Error struct {
	Status   int
	Messages []Message
	Header   http.Header
	// Cause is logged, never shown to the client.
	Cause error
}

func (e *Error) Error() string {
	ids := ""
	for _, m := range e.Messages {
		ids += " " + m.ID
	}
	if e.Cause != nil {
		return fmt.Sprintf("redfish %d%s: %v", e.Status, ids, e.Cause)
	}
	return fmt.Sprintf("redfish %d%s", e.Status, ids)
}

func (e *Error) Unwrap() error { return e.Cause }

func newError(status int, msgs ...Message) *Error {
	return &Error{Status: status, Messages: msgs}
}

// retryAfterUnavailable is the Retry-After sent with 503.
const retryAfterUnavailable = 5 * time.Second

// retryAfterSessionLimit is the Retry-After sent with a login refused at
// the session limit: sessions end at logout or expiry, not in seconds.
const retryAfterSessionLimit = time.Minute

// actionKey names the action a request runs (set by action handlers), so a
// backend's [BadValueError] is reported as an action parameter error.
const actionKey = "redfish.action"

// classify turns any error into an [*Error] for a request of method on
// uri; action is the action the request ran, "" for other requests.
func classify(err error, method, uri, action string) *Error {
	var rf *Error
	var bad *BadValueError
	var refused *RefusedValueError
	var he *echo.HTTPError
	var throttled *auth.ThrottledError
	var overShare *WriteThrottledError
	var readsQueued *ReadThrottledError
	var conflict *ConflictError
	var actionConflict *ActionConflictError
	switch {
	case errors.As(err, &rf):
		return rf
	case errors.As(err, &overShare):
		return overShare.answer()
	case errors.As(err, &readsQueued):
		return readsQueued.answer()
	case errors.As(err, &refused):
		return &Error{Status: http.StatusBadRequest, Messages: []Message{refused.message()}, Cause: err}
	case errors.As(err, &bad):
		m := msg("PropertyValueNotInList", []string{"#/" + bad.Property}, bad.Value, bad.Property)
		if action != "" {
			m = msg("ActionParameterValueFormatError", []string{"#/" + bad.Property}, bad.Value, bad.Property, action)
		}
		m.Resolution = badValueResolution(bad)
		return &Error{Status: http.StatusBadRequest, Messages: []Message{m}, Cause: err}
	case errors.As(err, &throttled):
		// rounded up: a client retrying on time is not refused again
		secs := strconv.Itoa(max(1, int(math.Ceil(throttled.RetryAfter.Seconds()))))
		m := msg("GeneralError", nil)
		m.Resolution = "Too many failed logins. Retry in " + secs + " seconds."
		e := newError(http.StatusTooManyRequests, m)
		e.Header = http.Header{"Retry-After": {secs}}
		return e
	case errors.Is(err, ErrNotFound):
		return &Error{Status: http.StatusNotFound, Messages: []Message{msg("ResourceMissingAtURI", nil, uri)}, Cause: err}
	case errors.As(err, &actionConflict):
		m := msg("ActionParameterValueConflict", []string{"#/" + actionConflict.Parameter}, actionConflict.Parameter, actionConflict.Value)
		m.Resolution = actionConflict.Resolution
		return &Error{Status: http.StatusConflict, Messages: []Message{m}, Cause: err}
	case errors.Is(err, ErrConflict):
		m := msg("ResourceInUse", nil)
		m.Resolution = conflictResolution
		if errors.As(err, &conflict) {
			m.Resolution = conflict.Resolution
		}
		return &Error{Status: http.StatusConflict, Messages: []Message{m}, Cause: err}
	case errors.Is(err, ErrPreconditionFailed):
		return &Error{Status: http.StatusPreconditionFailed, Messages: []Message{msg("PreconditionFailed", nil)}, Cause: err}
	case errors.Is(err, ErrUnavailable):
		secs := strconv.Itoa(int(retryAfterUnavailable / time.Second))
		return &Error{
			Status:   http.StatusServiceUnavailable,
			Messages: []Message{msg("ServiceTemporarilyUnavailable", nil, secs)},
			Header:   http.Header{"Retry-After": {secs}},
			Cause:    err,
		}
	case errors.Is(err, auth.ErrUnavailable):
		// a logout not recorded (the token stays valid everywhere), or
		// revocations that cannot be consulted
		secs := strconv.Itoa(int(retryAfterUnavailable / time.Second))
		m := msg("ServiceTemporarilyUnavailable", nil, secs)
		if method == http.MethodDelete && strings.HasPrefix(uri, sessionsURI) {
			m.Resolution = "The session was not ended and stays valid. Retry the request after " + secs + " seconds."
		}
		return &Error{Status: http.StatusServiceUnavailable, Messages: []Message{m}, Header: http.Header{"Retry-After": {secs}}, Cause: err}
	case errors.Is(err, auth.ErrBusy):
		// a password not checked for want of a hashing slot: nothing
		// decided, retry
		secs := strconv.Itoa(int(retryAfterUnavailable / time.Second))
		m := msg("ServiceTemporarilyUnavailable", nil, secs)
		m.Resolution = "Too many logins are being checked. Retry the request after " + secs + " seconds."
		return &Error{Status: http.StatusServiceUnavailable, Messages: []Message{m}, Header: http.Header{"Retry-After": {secs}}, Cause: err}
	case errors.Is(err, auth.ErrSessionLimit):
		return &Error{
			Status:   http.StatusServiceUnavailable,
			Messages: []Message{msg("SessionLimitExceeded", nil)},
			Header:   http.Header{"Retry-After": {strconv.Itoa(int(retryAfterSessionLimit / time.Second))}},
			Cause:    err,
		}
	case errors.Is(err, ErrNotSupported):
		m := msg("GeneralError", nil)
		m.Resolution = "The bridge does not implement this request."
		return &Error{Status: http.StatusNotImplemented, Messages: []Message{m}, Cause: err}
	case errors.As(err, &he):
		return fromEcho(he, method, uri)
	}
	return &Error{Status: http.StatusInternalServerError, Messages: []Message{msg("InternalError", nil)}, Cause: err}
}

func fromEcho(he *echo.HTTPError, method, uri string) *Error {
	switch he.Code {
	case http.StatusNotFound:
		return newError(http.StatusNotFound, msg("ResourceMissingAtURI", nil, uri))
	case http.StatusMethodNotAllowed:
		// "The action PATCH is not supported by the resource." (Base 1.9
		// has no message for a method; Allow lists the ones that are.)
		m := msg("ActionNotSupported", nil, method)
		m.Resolution = "Use one of the methods the Allow header lists for " + uri + "."
		return newError(http.StatusMethodNotAllowed, m)
	case http.StatusRequestEntityTooLarge:
		m := msg("GeneralError", nil)
		m.Resolution = fmt.Sprintf("Send a request body of at most %d bytes.", maxBodyBytes)
		return newError(http.StatusRequestEntityTooLarge, m)
	}
	m := msg("GeneralError", nil)
	m.Resolution = http.StatusText(he.Code)
	return &Error{Status: he.Code, Messages: []Message{m}, Cause: he}
}

// serviceFailed tells an answer the service failed to give (logged at
// Error, what alerting watches) from one the client's request earned
// (logged at Info): every 5xx but 501, which Redfish answers to a request
// for what the service does not implement (an unsupported query parameter
// such as $filter, an unsupported action value), as it answers 4xx to a
// malformed or unauthorized one, and but the 503 SessionLimitExceeded a
// user earns by holding the sessions the limit allows, and the 503 of a
// password check refused while a flood of logins holds the hashing slots
// (the flood's doing, not a failure of the service; logged at Info).
func serviceFailed(status int, err error) bool {
	return status >= 500 && status != http.StatusNotImplemented && !errors.Is(err, auth.ErrSessionLimit) && !errors.Is(err, auth.ErrBusy)
}

// handleError is echo's HTTPErrorHandler: the one place errors become
// statuses and Redfish error bodies.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	action, _ := c.Get(actionKey).(string)
	e := classify(err, c.Request().Method, c.Request().URL.Path, action)
	log := logctx.From(c.Request().Context())
	if serviceFailed(e.Status, err) {
		log.Error("request failed", "status", e.Status, "err", err)
	} else {
		log.Info("request rejected", "status", e.Status, "err", err)
	}
	for k, vs := range e.Header {
		for _, v := range vs {
			c.Response().Header().Add(k, v)
		}
	}
	if e.Status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Basic realm="redfish-bridge"`)
	}
	first := e.Messages[0].render()
	infos := make([]obj, len(e.Messages))
	for i, m := range e.Messages {
		infos[i] = m.render()
	}
	body := obj{"error": obj{
		"code":                  first["MessageId"],
		"message":               first["Message"],
		"@Message.ExtendedInfo": infos,
	}}
	if c.Request().Method == http.MethodHead {
		err = c.NoContent(e.Status)
	} else {
		err = c.JSON(e.Status, body)
	}
	if err != nil {
		log.Debug("write error response", "err", err)
	}
}
