package eventdelivery

import (
	"flag"
	"time"

	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// Config is the EventService's settings.
type Config struct {
	// Secret names the Secret (in the bridge's namespace) holding the
	// subscriptions.
	Secret string
	// AddrPolicy decides which addresses a destination may reach.
	AddrPolicy download.AddrPolicy
	// RetryAttempts and RetryInterval are the EventService's
	// DeliveryRetryAttempts and DeliveryRetryIntervalSeconds: how often a
	// failed delivery is retried before its subscription's policy
	// applies, and the first wait (doubling up to MaxBackoff).
	RetryAttempts int
	RetryInterval time.Duration
	// Timeout bounds one POST to a destination.
	Timeout time.Duration
	// QueueSize bounds the events waiting for one subscription.
	QueueSize int
	// MarkInterval is how often the leader records, in the
	// subscriptions' Secret, the last event delivered to each (one write
	// for all, only when one moved; and when its term ends): a new
	// leader replays the events after it.
	MarkInterval time.Duration
	// Limits cap subscriptions per user and in all.
	Limits eventsub.Limits
}

// MaxBackoff caps the wait between retries.
const MaxBackoff = 5 * time.Minute

// DefaultConfig is what the flags default to.
func DefaultConfig() Config {
	return Config{
		Secret:        "redfish-bridge-events",
		AddrPolicy:    download.AddrPolicy{DenyLoopback: true},
		RetryAttempts: 3, RetryInterval: 30 * time.Second, Timeout: 10 * time.Second, QueueSize: 1000,
		MarkInterval: 10 * time.Second,
	}
}

// RegisterFlags registers the settings' flags on fs, defaulting to c.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Secret, "event-subscriptions-secret", c.Secret, "Secret in the bridge's namespace holding the EventService's subscriptions")
	fs.Func("event-destination-policy", `addresses an event destination may not reach, as --image-addr-policy ("deny-loopback", "deny-private", "deny=<prefix>", "allow=<prefix>"; default "deny-loopback"; metadata and link-local always refused)`,
		func(s string) error {
			p, err := download.ParseAddrPolicy(s)
			c.AddrPolicy = p
			return err
		})
	fs.IntVar(&c.RetryAttempts, "event-retry-attempts", c.RetryAttempts, "retries of an undelivered event before the subscription's DeliveryRetryPolicy applies")
	fs.DurationVar(&c.RetryInterval, "event-retry-interval", c.RetryInterval, "wait before the first retry of an undelivered event (doubling on each)")
	fs.DurationVar(&c.Timeout, "event-delivery-timeout", c.Timeout, "bound on one POST of an event to a destination")
	fs.IntVar(&c.QueueSize, "event-queue-size", c.QueueSize, "events waiting for one subscription; a full queue suspends it")
	fs.DurationVar(&c.MarkInterval, "event-mark-interval", c.MarkInterval, "how often the leader records the last event delivered to each subscription; a new leader replays what came after it")
	fs.IntVar(&c.Limits.PerUser, "event-subscriptions-per-user", 20, "event subscriptions one user may hold")
	fs.IntVar(&c.Limits.Total, "event-subscriptions-max", 500, "event subscriptions all users together may hold")
}

// WithDefaults is c with every zero setting but AddrPolicy (whose zero
// value is a policy) set to [DefaultConfig]'s.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.Secret == "" {
		c.Secret = d.Secret
	}
	if c.RetryAttempts == 0 {
		c.RetryAttempts = d.RetryAttempts
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = d.RetryInterval
	}
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	if c.QueueSize == 0 {
		c.QueueSize = d.QueueSize
	}
	if c.MarkInterval <= 0 {
		c.MarkInterval = d.MarkInterval
	}
	return c
}
