package ipmi

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// fakeConsoles opens fakeStreams with console.Opener's one-stream-per-VM
// and ReadOnly rules (the real Opener's are tested in package console).
type fakeConsoles struct {
	mu     sync.Mutex
	open   map[system.Key]*fakeStream
	opened chan *fakeStream // each stream opened, if not nil
	// guest makes each stream's guest; nil: echoGuest.
	guest func(s *fakeStream)
}

func newFakeConsoles() *fakeConsoles {
	return &fakeConsoles{open: map[system.Key]*fakeStream{}, opened: make(chan *fakeStream, 8)}
}

func (f *fakeConsoles) Open(_ context.Context, user console.User, key system.Key) (console.Stream, error) {
	if user.ReadOnly {
		return nil, console.ErrReadOnly
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, busy := f.open[key]; busy {
		return nil, console.ErrActive
	}
	s := newFakeStream()
	s.onClose = func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.open[key] == s {
			delete(f.open, key)
		}
	}
	f.open[key] = s
	guest := f.guest
	if guest == nil {
		guest = echoGuest
	}
	go guest(s)
	select {
	case f.opened <- s:
	default:
	}
	return s, nil
}

// fakeStream is a console stream whose guest side is two pipes: out
// carries what the guest prints (unbuffered: a write blocks until the
// relay reads it), in what was typed to it.
type fakeStream struct {
	outR *io.PipeReader
	outW *io.PipeWriter
	inR  *io.PipeReader
	inW  *io.PipeWriter

	reads   atomic.Int64 // Read calls that returned bytes
	onClose func()
	once    sync.Once
	done    chan struct{}
}

func newFakeStream() *fakeStream {
	s := &fakeStream{done: make(chan struct{})}
	s.outR, s.outW = io.Pipe()
	s.inR, s.inW = io.Pipe()
	return s
}

func (s *fakeStream) Read(p []byte) (int, error) {
	n, err := s.outR.Read(p)
	if n > 0 {
		s.reads.Add(1)
	}
	return n, err
}

func (s *fakeStream) Write(p []byte) (int, error) { return s.inW.Write(p) }

func (s *fakeStream) Close() error {
	s.once.Do(func() {
		_ = s.outR.Close()
		_ = s.inW.Close()
		_ = s.outW.Close()
		_ = s.inR.Close()
		close(s.done)
		if s.onClose != nil {
			s.onClose()
		}
	})
	return nil
}

func (s *fakeStream) Done() <-chan struct{} { return s.done }

func (s *fakeStream) Err() error { return nil }

// fakeLoginPrompt is what echoGuest prints first.
const fakeLoginPrompt = "guest login: "

// echoGuest prints a login prompt, then echoes what it reads.
func echoGuest(s *fakeStream) {
	if _, err := s.outW.Write([]byte("boot log\r\n" + fakeLoginPrompt)); err != nil {
		return
	}
	buf := make([]byte, 512)
	for {
		n, err := s.inR.Read(buf)
		if n > 0 {
			if _, werr := s.outW.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
