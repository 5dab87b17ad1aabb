package testutil

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Redialer is a flood of keep-alive connections that dials again whatever
// the server closes or refuses, as a tenant re-dialing its client pool
// would ([Redial]).
type Redialer struct {
	// Answers, Dials and Lost count the answers read, the connections
	// dialed and those the server closed or refused.
	Answers, Dials, Lost atomic.Int64
	// first gets one value per connection slot at its first answer.
	first chan struct{}
}

// redialPause is how long a slot waits after losing its connection before
// it dials again: short, so the flood presses on the server's accept
// queue, without spinning a loaded machine's cores.
const redialPause = 5 * time.Millisecond

// Redial keeps n connection slots until the test ends: each dials with
// dial, GETs path with header every every on its connection (answered,
// kept alive), and dials again as soon as the server closes or refuses
// it.
func Redial(t testing.TB, n int, dial func(context.Context) (net.Conn, error), path string, header http.Header, every time.Duration) *Redialer {
	t.Helper()
	ctx := t.Context()
	r := &Redialer{first: make(chan struct{}, n)}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { r.slot(ctx, dial, path, header, every) })
	}
	t.Cleanup(wg.Wait)
	return r
}

// WaitAnswered waits until k slots have had an answer (or ctx ends).
func (r *Redialer) WaitAnswered(ctx context.Context, k int) error {
	for i := range k {
		select {
		case <-r.first:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d flood connections answered: %w", i, k, ctx.Err())
		}
	}
	return nil
}

// slot is one connection slot of [Redial].
func (r *Redialer) slot(ctx context.Context, dial func(context.Context) (net.Conn, error), path string, header http.Header, every time.Duration) {
	firstAnswer := true
	for ctx.Err() == nil {
		c, err := dial(ctx)
		r.Dials.Add(1)
		if err != nil {
			r.Lost.Add(1)
			pause(ctx, redialPause)
			continue
		}
		stop := context.AfterFunc(ctx, func() { _ = c.Close() })
		br := bufio.NewReader(c)
		for ctx.Err() == nil {
			if err := ask(c, br, path, header); err != nil {
				r.Lost.Add(1)
				break
			}
			r.Answers.Add(1)
			if firstAnswer {
				firstAnswer = false
				r.first <- struct{}{}
			}
			pause(ctx, every)
		}
		stop()
		_ = c.Close()
		pause(ctx, redialPause)
	}
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// ask makes one GET of path with header on c and reads its answer.
func ask(c net.Conn, r *bufio.Reader, path string, header http.Header) error {
	req, err := http.NewRequest(http.MethodGet, "http://bridge"+path, nil) // written to c by hand
	if err != nil {
		return fmt.Errorf("request %s: %w", path, err)
	}
	req.Header = header.Clone()
	if err := req.Write(c); err != nil {
		return fmt.Errorf("ask %s: %w", path, err)
	}
	resp, err := http.ReadResponse(r, req)
	if err != nil {
		return fmt.Errorf("answer to %s: %w", path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}
