package vncconsole

import (
	"flag"
	"time"
)

// Defaults of [Config].
const (
	DefaultMaxSessionsPerUser   = 4
	DefaultMaxSessionsPerSystem = 1
	DefaultIdleTimeout          = 15 * time.Minute
	DefaultWriteTimeout         = 10 * time.Second
	DefaultSessionCheck         = 5 * time.Second
	DefaultNoVNCDir             = "/usr/share/novnc"
)

// Config is the graphical console's settings.
type Config struct {
	// Disabled turns the console off: the Manager advertises
	// GraphicalConsole.ServiceEnabled false and its paths answer 404.
	Disabled bool
	// MaxSessionsPerUser bounds one user's open consoles, all Systems
	// together; a console past it is refused (429).
	MaxSessionsPerUser int
	// MaxSessionsPerSystem bounds the open consoles of one System (the
	// Manager's GraphicalConsole.MaxConcurrentSessions). KubeVirt's
	// virt-handler keeps one VNC connection per VMI (a new one closes the
	// one before it), so the default is 1: a second console is refused
	// rather than cutting off the first.
	MaxSessionsPerSystem int
	// IdleTimeout ends a console whose browser sent nothing for so long.
	IdleTimeout time.Duration
	// WriteTimeout ends a console whose browser took longer than this to
	// accept one message of the screen (a client that never reads holds
	// one buffer, then is dropped).
	WriteTimeout time.Duration
	// SessionCheck is how often an open console checks that its Redfish
	// session was not logged out on another replica (a logout through
	// this replica ends it at once).
	SessionCheck time.Duration
	// NoVNCDir is where noVNC is installed (Debian's novnc package:
	// /usr/share/novnc; its core/ and vendor/ are served to the page).
	NoVNCDir string
}

// withDefaults fills what c leaves zero.
func (c Config) withDefaults() Config {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&c.MaxSessionsPerUser, DefaultMaxSessionsPerUser)
	set(&c.MaxSessionsPerSystem, DefaultMaxSessionsPerSystem)
	setD(&c.IdleTimeout, DefaultIdleTimeout)
	setD(&c.WriteTimeout, DefaultWriteTimeout)
	setD(&c.SessionCheck, DefaultSessionCheck)
	if c.NoVNCDir == "" {
		c.NoVNCDir = DefaultNoVNCDir
	}
	return c
}

// RegisterFlags registers c's flags on fs (docs/configuration.md lists
// them).
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.Disabled, "graphical-console-disabled", false, "turn the graphical console off (the Managers advertise GraphicalConsole.ServiceEnabled false)")
	fs.IntVar(&c.MaxSessionsPerUser, "graphical-console-max-sessions-per-user", DefaultMaxSessionsPerUser, "open graphical consoles one user may hold, all Systems together")
	fs.IntVar(&c.MaxSessionsPerSystem, "graphical-console-max-sessions-per-system", DefaultMaxSessionsPerSystem, "open graphical consoles of one System (GraphicalConsole.MaxConcurrentSessions; KubeVirt's virt-handler serves one VNC connection per VMI, a new one closing the one before)")
	fs.DurationVar(&c.IdleTimeout, "graphical-console-idle-timeout", DefaultIdleTimeout, "end a graphical console whose browser sent nothing for this long")
	fs.StringVar(&c.NoVNCDir, "graphical-console-novnc-dir", DefaultNoVNCDir, "where noVNC is installed (Debian's novnc package)")
}
