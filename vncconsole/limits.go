package vncconsole

import (
	"fmt"
	"sync"
)

// limits counts open consoles per user and per System.
type limits struct {
	perUser, perSystem int

	mu      sync.Mutex
	users   map[string]int
	systems map[string]int
}

func newLimits(perUser, perSystem int) *limits {
	return &limits{perUser: perUser, perSystem: perSystem, users: map[string]int{}, systems: map[string]int{}}
}

// acquire counts a console of user on system, or says which bound it
// would pass; release undoes it.
func (l *limits) acquire(user, system string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.users[user] >= l.perUser {
		return nil, fmt.Errorf("user %s has %d consoles open, the most allowed", user, l.perUser)
	}
	if l.systems[system] >= l.perSystem {
		return nil, fmt.Errorf("system %s has %d consoles open, the most allowed", system, l.perSystem)
	}
	l.users[user]++
	l.systems[system]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.users[user]--
			l.systems[system]--
			if l.users[user] == 0 {
				delete(l.users, user)
			}
			if l.systems[system] == 0 {
				delete(l.systems, system)
			}
		})
	}, nil
}

// open is the number of open consoles.
func (l *limits) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.users {
		n += c
	}
	return n
}
