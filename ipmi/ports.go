package ipmi

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// PortAnnotation on a VirtualMachine gives its System's IPMI endpoint a
// UDP port (decimal, within the configured range). The VM's author writes
// it, with the same number as the BMC address it gives Ironic or metal3
// (ipmi://<bridge>:<port>); the bridge only reads it, so every replica
// and a restarted bridge serve the same port from their caches. (The
// cache keeps the redfish-bridge.io/ annotations of every VM.)
const PortAnnotation = "redfish-bridge.io/ipmi-port"

// Ports returns the port each System is served on: its annotation's
// value (annotated: by System), when in cfg's range. When two VMs name the
// same port the one whose namespace/name sorts first has it; the others
// have none and are reported in the error (each replica decides the same).
func Ports(annotated map[system.Key]string, cfg Config) (map[int]system.Key, error) {
	keys := make([]system.Key, 0, len(annotated))
	port := map[system.Key]int{}
	var problems []string
	for key, v := range annotated {
		p, err := strconv.Atoi(v)
		if err != nil || !cfg.InRange(p) {
			problems = append(problems, fmt.Sprintf("%s: %s %q is not a port in %d-%d", key, PortAnnotation, v, cfg.FirstPort, cfg.LastPort))
			continue
		}
		keys = append(keys, key)
		port[key] = p
	}
	slices.SortFunc(keys, func(a, b system.Key) int { return compareKeys(a, b) })
	out := make(map[int]system.Key, len(keys))
	for _, key := range keys {
		p := port[key]
		if first, taken := out[p]; taken {
			problems = append(problems, fmt.Sprintf("%s: port %d is %s's", key, p, first))
			continue
		}
		out[p] = key
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("ipmi ports not served: %v", problems)
	}
	return out, nil
}

func compareKeys(a, b system.Key) int {
	if a.Namespace != b.Namespace {
		if a.Namespace < b.Namespace {
			return -1
		}
		return 1
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}

// logProblems logs what Ports refused, once per change of it.
func logProblems(ctx context.Context, err error, last *string) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != *last && msg != "" {
		logctx.From(ctx).WarnContext(ctx, "ipmi: some VMs' ports are not served", "error", msg)
	}
	*last = msg
}
