package testutil

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// SSE is an open Server-Sent Events stream read as a client does: line
// by line from the live response body (Go's http client, no timeout on
// the body).
type SSE struct {
	resp   *http.Response
	lines  *bufio.Scanner
	cancel context.CancelFunc
	// KeepAlives counts the comments read; Comments holds their text.
	KeepAlives int
	Comments   []string
}

// SSEEvent is one event read from a stream: its id line and its data
// line decoded.
type SSEEvent struct {
	ID   string
	Data map[string]any
}

// MessageID is the first EventRecord's MessageId.
func (e SSEEvent) MessageID() string { return e.record()["MessageId"].(string) }

// Origin is the first EventRecord's OriginOfCondition's @odata.id ("" if none).
func (e SSEEvent) Origin() string {
	o, _ := e.record()["OriginOfCondition"].(map[string]any)
	s, _ := o["@odata.id"].(string)
	return s
}

func (e SSEEvent) record() map[string]any {
	recs, _ := e.Data["Events"].([]any)
	if len(recs) == 0 {
		return map[string]any{}
	}
	r, _ := recs[0].(map[string]any)
	return r
}

// OpenSSE GETs path (a ServerSentEventUri with its query) as c's user
// and returns the stream once it answered 200 text/event-stream, or the
// answer it got instead (resp != nil, stream nil). It ends with the
// test.
func (c Redfish) OpenSSE(t testing.TB, path string) (*SSE, *Response) {
	t.Helper()
	return c.OpenSSEAfter(t, path, "")
}

// OpenSSEAfter is [Redfish.OpenSSE] reconnecting as an SSE client does:
// with the Last-Event-ID header lastEventID (none if "").
func (c Redfish) OpenSSEAfter(t testing.TB, path, lastEventID string) (*SSE, *Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	if c.Token != "" {
		req.Header.Set("X-Auth-Token", c.Token)
	} else {
		req.SetBasicAuth(c.User, c.Password)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	if hc.Timeout != 0 { // a stream outlives any request timeout
		cp := *hc
		cp.Timeout = 0
		hc = &cp
	}
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer cancel()
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return nil, &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	}
	s := &SSE{resp: resp, lines: bufio.NewScanner(resp.Body), cancel: cancel}
	s.lines.Buffer(make([]byte, 64<<10), 1<<20)
	t.Cleanup(s.Close)
	return s, nil
}

// Close ends the stream (the client leaves).
func (s *SSE) Close() {
	s.cancel()
	_ = s.resp.Body.Close()
}

// Next reads the next event (counting the keep-alive comments on the
// way); the error is the stream's end (io.EOF when the service ended it)
// or a frame that is not an event.
func (s *SSE) Next() (SSEEvent, error) {
	var ev SSEEvent
	var data string
	for s.lines.Scan() {
		line := s.lines.Text()
		switch {
		case line == "":
			if data == "" {
				continue // the end of a comment
			}
			if err := json.Unmarshal([]byte(data), &ev.Data); err != nil {
				return ev, fmt.Errorf("event %s: data %q: %w", ev.ID, data, err)
			}
			return ev, nil
		case strings.HasPrefix(line, ":"):
			s.KeepAlives++
			s.Comments = append(s.Comments, strings.TrimSpace(strings.TrimPrefix(line, ":")))
		case strings.HasPrefix(line, "id: "):
			ev.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		default:
			return ev, fmt.Errorf("a line that is no event-stream field: %q", line)
		}
	}
	if err := s.lines.Err(); err != nil {
		return ev, err
	}
	return ev, io.EOF
}

// AwaitBound is how long [SSE.Await] reads before it gives up (it ends
// the stream): a bound on a failure, not a window a result depends on.
const AwaitBound = 60 * time.Second

// Await reads events until one of msg about origin, failing the test if
// the stream ends first (or AwaitBound passes); it returns that event and
// every event read.
func (s *SSE) Await(t testing.TB, what, msg, origin string) (SSEEvent, []SSEEvent) {
	t.Helper()
	bound := time.AfterFunc(AwaitBound, s.Close)
	defer bound.Stop()
	var read []SSEEvent
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("%s: the stream ended before %s about %s: %v (read %d events)", what, msg, origin, err, len(read))
		}
		read = append(read, ev)
		if ev.MessageID() == msg && ev.Origin() == origin {
			return ev, read
		}
	}
}

// AwaitKeepAlive reads until a comment (the service's keep-alive); an
// event on the way is an error, as is the stream's end.
func (s *SSE) AwaitKeepAlive() error {
	for s.lines.Scan() {
		line := s.lines.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			s.KeepAlives++
			return nil
		case line != "":
			return fmt.Errorf("read %q waiting for a keep-alive", line)
		}
	}
	if err := s.lines.Err(); err != nil {
		return err
	}
	return io.EOF
}
