package eventstream

import (
	"flag"
	"time"
)

// Config is the Server-Sent Events' settings.
type Config struct {
	// MaxPerUser caps the streams one user holds open on one replica.
	MaxPerUser int
	// Buffer is how many events one stream holds not yet written to its
	// client; a stream whose buffer fills is ended (its reader is too
	// slow), the bus never waits for it.
	Buffer int
	// KeepAlive is how often an idle stream sends a comment (and checks
	// that its session was not logged out on another replica).
	KeepAlive time.Duration
	// WriteTimeout bounds writing one frame to the client: a client that
	// stops reading is dropped after it.
	WriteTimeout time.Duration
}

// Defaults of [Config].
const (
	DefaultMaxPerUser   = 4
	DefaultBuffer       = 1000
	DefaultKeepAlive    = 30 * time.Second
	DefaultWriteTimeout = 10 * time.Second
)

// DefaultConfig is what the flags default to.
func DefaultConfig() Config {
	return Config{MaxPerUser: DefaultMaxPerUser, Buffer: DefaultBuffer, KeepAlive: DefaultKeepAlive, WriteTimeout: DefaultWriteTimeout}
}

// RegisterFlags registers the settings' flags on fs, defaulting to c.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.MaxPerUser, "sse-streams-per-user", c.MaxPerUser, "Server-Sent Event streams one user may hold open on one replica")
	fs.IntVar(&c.Buffer, "sse-buffer", c.Buffer, "events one Server-Sent Event stream may hold unwritten before it is dropped as too slow")
	fs.DurationVar(&c.KeepAlive, "sse-keepalive", c.KeepAlive, "interval of the keep-alive comment on an idle Server-Sent Event stream")
	fs.DurationVar(&c.WriteTimeout, "sse-write-timeout", c.WriteTimeout, "bound on writing one event to a Server-Sent Event client; a client that does not read is dropped")
}

// withDefaults is c with every zero (or negative) setting set to
// [DefaultConfig]'s.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MaxPerUser <= 0 {
		c.MaxPerUser = d.MaxPerUser
	}
	if c.Buffer <= 0 {
		c.Buffer = d.Buffer
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = d.KeepAlive
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	return c
}
