package service_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// deliveredEvent is one EventRecord a test receiver got.
type deliveredEvent struct {
	id, msg, origin, context string
}

// receiver is an event destination recording every EventRecord it gets.
type receiver struct {
	*httptest.Server
	got chan deliveredEvent

	mu     sync.Mutex
	counts map[string]int // how often each EventId came
}

// count is how often EventId id came.
func (rc *receiver) count(id string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.counts[id]
}

// duplicates are the EventIds received more than once, with how often.
func (rc *receiver) duplicates() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	d := map[string]int{}
	for id, n := range rc.counts {
		if n > 1 {
			d[id] = n
		}
	}
	return d
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{got: make(chan deliveredEvent, 1000), counts: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Context string
			Events  []struct {
				EventId, MessageId string
				OriginOfCondition  struct {
					ID string `json:"@odata.id"`
				}
			}
		}
		_ = json.Unmarshal(raw, &body)
		for _, ev := range body.Events {
			rc.mu.Lock()
			rc.counts[ev.EventId]++
			rc.mu.Unlock()
			rc.got <- deliveredEvent{ev.EventId, ev.MessageId, ev.OriginOfCondition.ID, body.Context}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// await reads the receiver until the event of msg about origin; it fails
// the test when waitTimeout passes first.
func (rc *receiver) await(t *testing.T, what, msg, origin string) deliveredEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	var seen []string
	for {
		select {
		case ev := <-rc.got:
			seen = append(seen, ev.msg+" "+ev.origin)
			if ev.msg == msg && ev.origin == origin {
				return ev
			}
		case <-ctx.Done():
			t.Fatalf("%s: no %s about %s delivered within %s; delivered:\n%s", what, msg, origin, waitTimeout, strings.Join(seen, "\n"))
		}
	}
}
