package console

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Stream is an open serial console: Read reads what the guest printed,
// Write types to it, in order and unbuffered (see the package
// documentation). Close ends it; Done is closed once it ended, for any
// reason, and Err says why.
type Stream interface {
	io.ReadWriteCloser
	Done() <-chan struct{}
	Err() error
}

// ErrIdle ends a stream idle for Config.IdleTimeout.
var ErrIdle = errors.New("console: idle timeout")

// ErrClosed ends a stream its holder closed.
var ErrClosed = errors.New("console: closed")

// stream is an open console: the WebSocket, the counts and the audit.
type stream struct {
	opener *Opener
	user   string
	key    system.Key

	conn      *websocketConn
	log       *slog.Logger
	idle      *time.Timer
	idleAfter time.Duration
	in, out   atomic.Int64 // bytes typed to the guest, bytes read from it

	once sync.Once
	done chan struct{}
	err  error
}

func (s *stream) start(conn *websocketConn, log *slog.Logger, idle time.Duration) {
	s.conn, s.log, s.idleAfter = conn, log, idle
	s.done = make(chan struct{})
	// The timer may fire (a short idle timeout on a loaded machine) before
	// AfterFunc's result is stored in s.idle, which end reads: the
	// callback waits until it is.
	stored := make(chan struct{})
	s.idle = time.AfterFunc(idle, func() {
		<-stored
		s.end(ErrIdle)
	})
	close(stored)
}

// Read reads what the guest printed.
func (s *stream) Read(p []byte) (int, error) {
	n, err := s.conn.Read(p)
	if n > 0 {
		s.out.Add(int64(n))
		s.idle.Reset(s.idleAfter)
	}
	if err != nil {
		s.end(err)
		return n, s.Err()
	}
	return n, nil
}

// Write types p to the guest.
func (s *stream) Write(p []byte) (int, error) {
	n, err := s.conn.Write(p)
	if n > 0 {
		s.in.Add(int64(n))
		s.idle.Reset(s.idleAfter)
	}
	if err != nil {
		s.end(err)
		return n, s.Err()
	}
	return n, nil
}

// Close ends the stream.
func (s *stream) Close() error {
	s.end(ErrClosed)
	return nil
}

func (s *stream) Done() <-chan struct{} { return s.done }

// Err is why the stream ended, nil while it is open.
func (s *stream) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// end closes the stream once, releases its place and writes the audit line.
func (s *stream) end(why error) {
	s.once.Do(func() {
		s.idle.Stop()
		_ = s.conn.Close()
		s.err = why
		close(s.done)
		s.opener.release(s)
		reason := why.Error()
		if errors.Is(why, io.EOF) || gwebsocket.IsCloseError(why, gwebsocket.CloseNormalClosure) {
			reason = "the guest side closed"
		}
		s.log.Info("console closed", "bytesToGuest", s.in.Load(), "bytesFromGuest", s.out.Load(), "reason", reason)
	})
}

// websocketConn is the console's WebSocket as a byte stream: each Write is
// one binary message; Read reads the messages' payloads in order.
type websocketConn struct {
	conn *gwebsocket.Conn
	mu   sync.Mutex // one writer at a time
	r    io.Reader
}

func (c *websocketConn) Read(p []byte) (int, error) {
	for {
		if c.r == nil {
			_, r, err := c.conn.NextReader()
			if err != nil {
				return 0, err
			}
			c.r = r
		}
		n, err := c.r.Read(p)
		if errors.Is(err, io.EOF) {
			c.r = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

func (c *websocketConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.conn.WriteMessage(gwebsocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *websocketConn) Close() error { return c.conn.Close() }

// isNotRunning tells virt-api's refusals of a VMI that does not run
// (400 not running, 409 failed, 404 no VMI).
func isNotRunning(err error) bool {
	return apierrors.IsBadRequest(err) || apierrors.IsConflict(err) || apierrors.IsNotFound(err)
}
