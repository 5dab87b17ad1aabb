package redfish

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/eventstream"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// The EventService's Server-Sent Events (DSP0266 "Server-sent events"):
// a GET of sseURI stays open and receives, as text/event-stream, each
// event its $filter lets through and its user may read, one `id:` line
// (the Event's Id) and one `data:` line (the Event) each. What a stream
// receives is package eventstream's; this file frames it.

const sseURI = eventServiceURI + "/SSE"

// handleStream registers h for GET on path (with and without a trailing
// slash) for authenticated callers only, as a stream: no request timeout
// ([Server.protocol]), no read share held for its life, no $expand; h
// reads its own query.
func (s *Server) handleStream(e *echo.Echo, path string, h echo.HandlerFunc) {
	h = s.authenticated(h)
	for _, p := range []string{path, path + "/"} {
		s.streamed[p] = true
		e.Add(http.MethodGet, p, h)
	}
}

// streamEvents serves one stream until its client leaves, its session
// logs out, or it falls behind.
func (s *Server) streamEvents(c echo.Context) error {
	if s.b.Streams == nil {
		return fmt.Errorf("event stream: %w", ErrNotFound)
	}
	filter, err := streamFilter(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	// A client reconnecting (a browser's EventSource, any SSE client)
	// sends the ID of the last event it read.
	st, err := s.b.Streams.Open(principal(c), filter, c.Request().Header.Get("Last-Event-ID"))
	if err != nil {
		return streamError(err, filter)
	}
	defer st.Close()
	ctx := c.Request().Context()
	w := c.Response()
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return nil // the client left: nothing to answer
	}
	for {
		f, err := st.Next(ctx)
		if err != nil {
			logctx.From(ctx).DebugContext(ctx, "event stream ended", "error", err.Error())
			return nil
		}
		_ = rc.SetWriteDeadline(time.Now().Add(s.b.Streams.WriteTimeout()))
		if _, err := w.Write(frame(f)); err != nil {
			return nil // the client left or stopped reading
		}
		if err := rc.Flush(); err != nil {
			return nil // as above
		}
	}
}

// frame is f as text/event-stream: a comment for a keep-alive, else
// `id:` and `data:` (the JSON holds no newline).
func frame(f eventstream.Frame) []byte {
	if f.Data == nil && f.Comment != "" {
		return []byte(": " + f.Comment + "\n\n")
	}
	if f.Data == nil {
		return []byte(": keep-alive\n\n")
	}
	b := make([]byte, 0, len(f.ID)+len(f.Data)+16)
	b = append(b, "id: "...)
	b = append(b, f.ID...)
	b = append(b, "\ndata: "...)
	b = append(b, f.Data...)
	return append(b, "\n\n"...)
}

// streamFilter reads a stream's query: one $filter at most, nothing else.
func streamFilter(raw string) (string, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		m := msg("GeneralError", nil)
		m.Resolution = "Percent-encode the query string."
		return "", newError(http.StatusBadRequest, m)
	}
	for name, vals := range q {
		if name != "$filter" {
			m := msg("QueryNotSupported", nil)
			m.Resolution = "Remove " + name + ": an event stream takes only $filter."
			return "", newError(http.StatusNotImplemented, m)
		}
		if len(vals) > 1 {
			m := msg("QueryParameterValueFormatError", nil, vals[1], "$filter")
			m.Resolution = "Give $filter once; join its conditions with or."
			return "", newError(http.StatusBadRequest, m)
		}
	}
	return q.Get("$filter"), nil
}

// streamError maps eventstream's refusals to the service's errors.
func streamError(err error, filter string) error {
	var bad *eventstream.FilterError
	switch {
	case errors.As(err, &bad):
		shown := filter
		if len(shown) > 80 {
			shown = shown[:80] + "..."
		}
		m := msg("QueryParameterValueFormatError", nil, shown, "$filter")
		m.Resolution = "Fix the filter: " + bad.Reason + "."
		return &Error{Status: http.StatusBadRequest, Messages: []Message{m}, Cause: err}
	case errors.Is(err, eventstream.ErrLimit):
		m := msg("CreateLimitReachedForResource", nil)
		m.Resolution = "Close event streams you hold open before opening more: " + err.Error() + "."
		return &Error{Status: http.StatusBadRequest, Messages: []Message{m}, Cause: err}
	}
	return fmt.Errorf("open event stream: %w", err)
}
