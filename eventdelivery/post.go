package eventdelivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// EventType is the EventType of every event the bridge emits from a
// change (the deprecated property sushy and Ironic still filter on).
const EventType = "Alert"

// poster posts events: one client verifying TLS against the system's
// trust, one that does not (for subscriptions that turned
// VerifyCertificate off). Neither follows a redirect nor takes a proxy
// from the environment; both check every dialed address.
type poster struct {
	verified, unverified *http.Client
}

func newPoster(p download.AddrPolicy, timeout time.Duration) *poster {
	mk := func(insecure bool) *http.Client {
		d := &net.Dialer{Timeout: timeout, Control: p.Control}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = d.DialContext
		t.Proxy = nil
		t.MaxIdleConnsPerHost = 2
		t.ResponseHeaderTimeout = timeout
		if insecure {
			t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // G402: the subscription turned VerifyCertificate off
		}
		return &http.Client{Transport: t, Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	return &poster{verified: mk(false), unverified: mk(true)}
}

// post sends body to s's destination; an answer other than 2xx (a
// redirect included) is an error.
func (p *poster) post(ctx context.Context, s *eventsub.Subscription, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Destination, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("event to %s: %w", s.ID, err)
	}
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	c := p.verified
	if !s.VerifyCertificate {
		c = p.unverified
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("post event of subscription %s: %w", s.ID, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("post event of subscription %s: destination answered %s (redirects are not followed)", s.ID, resp.Status)
	}
	return nil
}

// Body is the Redfish Event a subscription with context ctx receives
// for e of type eventType.
func Body(e event.Event, eventType, context string) ([]byte, error) {
	rec := map[string]any{
		"EventType":       eventType,
		"EventId":         e.ID,
		"EventTimestamp":  e.Time.UTC().Format(time.RFC3339),
		"MemberId":        "0",
		"MessageId":       e.MessageID,
		"Message":         e.Message,
		"MessageArgs":     nonNil(e.MessageArgs),
		"MessageSeverity": string(orOK(e.Severity)),
		"Severity":        string(orOK(e.Severity)),
	}
	if e.Origin != "" {
		rec["OriginOfCondition"] = map[string]any{"@odata.id": e.Origin}
	}
	body := map[string]any{
		"@odata.type": "#Event.v1_10_0.Event",
		"Id":          e.ID,
		"Name":        "Event",
		"Context":     context,
		"Events":      []any{rec},
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	return raw, nil
}

func orOK(s event.Severity) event.Severity {
	if s == "" {
		return event.SeverityOK
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
