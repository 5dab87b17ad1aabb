package ipmi

import (
	"flag"
	"fmt"
	"time"
)

// Config are the IPMI endpoint's settings.
type Config struct {
	// Address is the host the UDP ports bind ("" or "0.0.0.0": all).
	Address string
	// FirstPort and LastPort bound the ports Systems may be given; 0 and
	// 0 turn IPMI off.
	FirstPort, LastPort int
	// SessionTimeout ends a session idle this long (0: the default).
	SessionTimeout time.Duration
	// SessionsPerAddress bounds one client address's sessions (0: the
	// default); MaxSessions all of them (0: the default).
	SessionsPerAddress, MaxSessions int
}

// RegisterFlags registers the settings on fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Address, "ipmi-address", "", "host the IPMI UDP ports bind (empty: all addresses)")
	fs.IntVar(&c.FirstPort, "ipmi-first-port", 0, "first UDP port a System's IPMI endpoint may have (0 with --ipmi-last-port 0: IPMI off)")
	fs.IntVar(&c.LastPort, "ipmi-last-port", 0, "last UDP port a System's IPMI endpoint may have")
	fs.DurationVar(&c.SessionTimeout, "ipmi-session-timeout", DefaultSessionTimeout, "an IPMI session idle this long ends")
	fs.IntVar(&c.SessionsPerAddress, "ipmi-sessions-per-address", MaxSessionsPerAddress, "IPMI sessions one client address (an IPv6 /64) may hold")
	fs.IntVar(&c.MaxSessions, "ipmi-max-sessions", DefaultMaxSessions, "IPMI sessions a replica holds at most")
}

// Enabled reports whether IPMI is served.
func (c Config) Enabled() bool { return c.FirstPort != 0 || c.LastPort != 0 }

// Validate checks the port range.
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	if c.FirstPort < 1 || c.LastPort > 65535 || c.FirstPort > c.LastPort {
		return fmt.Errorf("ipmi port range %d-%d: want 1 <= first <= last <= 65535", c.FirstPort, c.LastPort)
	}
	return nil
}

// InRange reports whether port is in the configured range.
func (c Config) InRange(port int) bool {
	return c.Enabled() && port >= c.FirstPort && port <= c.LastPort
}

func (c *Config) defaults() {
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.SessionsPerAddress <= 0 {
		c.SessionsPerAddress = MaxSessionsPerAddress
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
}
