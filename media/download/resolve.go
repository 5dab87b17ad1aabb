package download

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// HostResolver looks up a host name's addresses; [net.Resolver] is one
// (net.DefaultResolver: the bridge pod's DNS, the cluster's).
type HostResolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolveTimeout bounds the lookup of an image URL's host at insert.
const resolveTimeout = 5 * time.Second

// ValidateResolved is [AddrPolicy.ValidateURL] plus the URL's host name
// resolved with r: every address it resolves to must be allowed by p,
// and a name that does not resolve is refused too (the policy cannot be
// checked). namespace is the importer's: a single-label name is looked up
// as <name>.<namespace> first (the importer pod's first DNS search domain
// is <namespace>.svc; the bridge's search list adds the svc suffix). It
// is for import methods that do not enforce the policy at connect time
// (CDI's importer): the check holds at insert only, see docs/images.md
// for what a DNS answer that changes later (rebinding) and HTTP redirects
// can still reach. It returns an [*InvalidURLError].
func (p AddrPolicy) ValidateResolved(ctx context.Context, r HostResolver, raw, namespace string) error {
	if err := p.ValidateURL(raw); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return &InvalidURLError{URL: logctx.RedactURL(raw), Reason: parseReason(raw, err)} // ValidateURL parsed it: not reached
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(strings.TrimSuffix(host, ".")); err == nil {
		return nil // a literal IP: ValidateURL checked it
	}
	if why := p.checkName(ctx, r, host, namespace); why != "" {
		return &InvalidURLError{URL: logctx.RedactURL(raw), Reason: why}
	}
	return nil
}

// checkName returns why host is refused: it does not resolve, or it
// resolves to an address p refuses; "" if every address is allowed.
func (p AddrPolicy) checkName(ctx context.Context, r HostResolver, host, namespace string) string {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	var addrs []netip.Addr
	var err error
	if namespace != "" && !strings.Contains(host, ".") { // "images." is absolute
		addrs, _ = r.LookupNetIP(ctx, "ip", host+"."+namespace) // a Service of the namespace
	}
	if len(addrs) == 0 {
		addrs, err = r.LookupNetIP(ctx, "ip", host)
	}
	if err != nil || len(addrs) == 0 {
		return fmt.Sprintf("host %s does not resolve, so the address policy cannot be checked (%v)", host, err)
	}
	for _, a := range addrs {
		if why := p.Check(a); why != "" {
			return fmt.Sprintf("host %s resolves to %s, a refused %s", host, a.Unmap(), why)
		}
	}
	return ""
}
