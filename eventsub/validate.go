package eventsub

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// Bounds on what one subscription may hold: a hostile filter or header
// set is refused, not stored.
const (
	MaxDestinationLen = 2048
	MaxContextLen     = 256
	MaxFilterEntries  = 32
	MaxFilterEntryLen = 256
	MaxHeaders        = 16
	MaxHeaderBytes    = 8 << 10
)

// InvalidError names the property of a request that is not acceptable
// and why.
type InvalidError struct {
	Property, Value, Reason string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Property, e.Value, e.Reason)
}

func invalid(prop, val, format string, args ...any) *InvalidError {
	if len(val) > 80 {
		val = val[:80] + "..."
	}
	return &InvalidError{Property: prop, Value: val, Reason: fmt.Sprintf(format, args...)}
}

// Request is what a client asked for; empty strings take the defaults.
type Request struct {
	Destination, Context, Protocol, Format, RetryPolicy string
	RegistryPrefixes, ResourceTypes, OriginResources    []string
	EventTypes, MessageIDs                              []string
	SubordinateResources                                bool
	// VerifyCertificate nil is true.
	VerifyCertificate *bool
	Headers           map[string]string
}

// hopHeaders are headers a subscription may not set: the delivery's own
// framing and the hop-by-hop ones.
var hopHeaders = []string{"Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection",
	"Keep-Alive", "Upgrade", "Te", "Trailer", "Proxy-Authorization", "Proxy-Connection", "Expect"}

// Validate checks r and returns the subscription it describes (without
// ID, Owner, State and Created), or an [*InvalidError]. The destination
// must be an http(s) URL with a host and no user information (credentials
// go in HttpHeaders), and a literal address must be one policy allows;
// a host name is checked again at every connection.
func Validate(r Request, policy download.AddrPolicy) (Subscription, error) {
	s := Subscription{
		Destination: r.Destination, Context: r.Context, Protocol: r.Protocol, Format: r.Format, RetryPolicy: r.RetryPolicy,
		SubordinateResources: r.SubordinateResources, VerifyCertificate: r.VerifyCertificate == nil || *r.VerifyCertificate,
	}
	if err := checkDestination(r.Destination, policy); err != nil {
		return Subscription{}, err
	}
	if len(r.Context) > MaxContextLen || !printable(r.Context) {
		return Subscription{}, invalid("Context", r.Context, "at most %d printable characters", MaxContextLen)
	}
	if s.Protocol == "" {
		s.Protocol = ProtocolRedfish
	}
	if s.Protocol != ProtocolRedfish {
		return Subscription{}, invalid("Protocol", r.Protocol, "the bridge delivers only Redfish events")
	}
	if s.Format == "" {
		s.Format = FormatEvent
	}
	if s.Format != FormatEvent {
		return Subscription{}, invalid("EventFormatType", r.Format, "the bridge sends only Event (no metric reports)")
	}
	if s.RetryPolicy == "" {
		s.RetryPolicy = RetrySuspend
	}
	if !slices.Contains(RetryPolicies, s.RetryPolicy) {
		return Subscription{}, invalid("DeliveryRetryPolicy", r.RetryPolicy, "one of %s", strings.Join(RetryPolicies, ", "))
	}
	var err error
	if s.EventTypes, err = filter("EventTypes", r.EventTypes, func(v string) bool { return slices.Contains(EventTypes, v) }); err != nil {
		return Subscription{}, err
	}
	if s.RegistryPrefixes, err = filter("RegistryPrefixes", r.RegistryPrefixes, func(v string) bool { return slices.Contains(RegistryPrefixes, v) }); err != nil {
		return Subscription{}, err
	}
	if s.MessageIDs, err = filter("MessageIds", r.MessageIDs, isMessageID); err != nil {
		return Subscription{}, err
	}
	if s.ResourceTypes, err = filter("ResourceTypes", r.ResourceTypes, isIdentifier); err != nil {
		return Subscription{}, err
	}
	if s.OriginResources, err = filter("OriginResources", r.OriginResources, isResourcePath); err != nil {
		return Subscription{}, err
	}
	if s.Headers, err = checkHeaders(r.Headers); err != nil {
		return Subscription{}, err
	}
	return s, nil
}

// checkDestination refuses a destination the delivery could not or must
// not reach.
func checkDestination(dest string, policy download.AddrPolicy) error {
	if dest == "" {
		return invalid("Destination", dest, "required: the http or https URL events are posted to")
	}
	if len(dest) > MaxDestinationLen || !printable(dest) {
		return invalid("Destination", dest, "at most %d printable characters", MaxDestinationLen)
	}
	u, err := url.Parse(dest)
	switch {
	case err != nil:
		return invalid("Destination", dest, "not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return invalid("Destination", dest, "the scheme must be http or https")
	case u.Hostname() == "":
		return invalid("Destination", dest, "no host")
	case u.User != nil:
		return invalid("Destination", dest, "user information in the URL is refused: send credentials in HttpHeaders (never shown again)")
	case u.Fragment != "":
		return invalid("Destination", dest, "a fragment is not sent: remove it")
	}
	if addr, err := netip.ParseAddr(u.Hostname()); err == nil {
		if why := policy.Check(addr); why != "" {
			return invalid("Destination", dest, "the address policy refuses %s: %s", addr, why)
		}
	}
	return nil
}

// filter checks a filter list: bounded, every entry valid, no duplicates.
func filter(prop string, vals []string, ok func(string) bool) ([]string, error) {
	if len(vals) > MaxFilterEntries {
		return nil, invalid(prop, fmt.Sprint(len(vals)), "at most %d entries", MaxFilterEntries)
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if len(v) > MaxFilterEntryLen || !printable(v) || !ok(v) {
			return nil, invalid(prop, v, "not an accepted value")
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// checkHeaders refuses headers that are malformed, too many or too large,
// or that would change the delivery's own framing.
func checkHeaders(h map[string]string) (map[string]string, error) {
	if len(h) > MaxHeaders {
		return nil, invalid("HttpHeaders", fmt.Sprint(len(h)), "at most %d headers", MaxHeaders)
	}
	size := 0
	out := make(map[string]string, len(h))
	for name, val := range h {
		size += len(name) + len(val)
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, invalid("HttpHeaders", name, "not a header name")
		}
		if !httpguts.ValidHeaderFieldValue(val) {
			return nil, invalid("HttpHeaders", name, "its value is not a valid header value")
		}
		canon := http.CanonicalHeaderKey(name)
		if slices.Contains(hopHeaders, canon) {
			return nil, invalid("HttpHeaders", name, "set by the delivery itself")
		}
		out[canon] = val
	}
	if size > MaxHeaderBytes {
		return nil, invalid("HttpHeaders", fmt.Sprint(size), "at most %d bytes in all", MaxHeaderBytes)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// isIdentifier is a Redfish type name: letters and digits.
func isIdentifier(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// isMessageID is "Registry.Message" or "Registry.M.m.e.Message".
func isMessageID(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 2 && len(parts) != 5 {
		return false
	}
	return isIdentifier(parts[0]) && isIdentifier(parts[len(parts)-1])
}

// isResourcePath is an @odata.id of the service.
func isResourcePath(s string) bool {
	return strings.HasPrefix(s, "/redfish/v1/") && !strings.Contains(s, "..") && !strings.ContainsAny(s, "?#\\ ")
}
