package eventrecv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Record is one EventRecord a Receiver got, with its Event's Context and
// the request's headers.
type Record struct {
	Context   string
	EventID   string
	MessageID string
	Origin    string // OriginOfCondition's @odata.id
	Header    http.Header
	At        time.Time // when the POST arrived
}

// Receiver is an event destination a test runs: an HTTP server on
// 127.0.0.1 that records every EventRecord posted to it and wakes its
// waiters.
type Receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []Record
	changed chan struct{} // closed and replaced on every post
}

// Start starts a Receiver, closed when t ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{changed: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// URL is the Destination to subscribe.
func (r *Receiver) URL() string { return r.srv.URL + "/events" }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var body struct {
		Context string `json:"Context"`
		Events  []struct {
			EventID           string `json:"EventId"`
			MessageID         string `json:"MessageId"`
			OriginOfCondition struct {
				ID string `json:"@odata.id"`
			} `json:"OriginOfCondition"`
		} `json:"Events"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	if err != nil || req.Method != http.MethodPost {
		http.Error(w, fmt.Sprintf("not an Event POST: %s %v", req.Method, err), http.StatusBadRequest)
		return
	}
	now := time.Now()
	r.mu.Lock()
	for _, e := range body.Events {
		r.got = append(r.got, Record{Context: body.Context, EventID: e.EventID, MessageID: e.MessageID, Origin: e.OriginOfCondition.ID, Header: req.Header.Clone(), At: now})
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// WaitFor waits until the receiver got an event about origin whose
// MessageId ends in "."+one of suffixes, received at or after since; it
// fails t after timeout.
func (r *Receiver) WaitFor(t testing.TB, origin string, since time.Time, timeout time.Duration, suffixes ...string) Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	for {
		r.mu.Lock()
		for _, e := range r.got {
			if e.Origin != origin || e.At.Before(since) {
				continue
			}
			for _, s := range suffixes {
				if strings.HasSuffix(e.MessageID, "."+s) {
					r.mu.Unlock()
					return e
				}
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no %v event about %s within %s; the receiver got %s", suffixes, origin, timeout, r.About(origin))
		}
	}
}

// About lists the events about origin the receiver got.
func (r *Receiver) About(origin string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.got {
		if e.Origin == origin {
			fmt.Fprintf(&b, "\n  %s %s (context %q)", e.At.Format("15:04:05.000"), e.MessageID, e.Context)
		}
	}
	if b.Len() == 0 {
		return "nothing about it"
	}
	return b.String()
}

// Count is how many events the receiver got in all.
func (r *Receiver) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}
