package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"golang.org/x/crypto/ssh"
)

// measureEcho opens vm's console over SSH and echoes n bytes through it
// ([echo]) into res.
func measureEcho(ctx context.Context, addr string, cfg *ssh.ClientConfig, vm string, n int, res *ConsoleResult) error {
	c, err := openConsole(ctx, addr, cfg, vm)
	if err != nil {
		return err
	}
	defer c.close()
	res.Elapsed, err = echo(ctx, c.in, c.out, n)
	if err == nil {
		res.Echoed = n
	}
	return err
}

// echo sends n bytes (letters: no line end, no escape) to in while it
// reads their echo from out, checking every byte in order; it returns the
// time from the first byte sent to the last one read.
func echo(ctx context.Context, in io.Writer, out io.Reader, n int) (time.Duration, error) {
	want := make([]byte, n)
	for i := range want {
		want[i] = 'a' + byte(i%26)
	}
	start := time.Now()
	sent := make(chan error, 1)
	go func() {
		for off := 0; off < n; off += 32 << 10 {
			if _, err := in.Write(want[off:min(off+32<<10, n)]); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	got := make(chan error, 1)
	go func() {
		buf := make([]byte, n)
		if _, err := io.ReadFull(out, buf); err != nil {
			got <- fmt.Errorf("read the echo: %w", err)
			return
		}
		for i := range buf {
			if buf[i] != want[i] {
				got <- fmt.Errorf("echo byte %d is %q, want %q: lost or reordered", i, buf[i], want[i])
				return
			}
		}
		got <- nil
	}()
	var err error
	select {
	case err = <-got:
	case <-ctx.Done():
		err = ctx.Err()
	}
	elapsed := time.Since(start)
	if err != nil {
		return elapsed, err
	}
	return elapsed, <-sent
}

// EchoBytesPerSecond is the bytes one console carried each way per second.
func (r *ConsoleResult) EchoBytesPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Echoed) / r.Elapsed.Seconds()
}

// SOLBytesPerSecond is the bytes the SOL console carried each way per
// second.
func (r *ConsoleResult) SOLBytesPerSecond() float64 {
	if r.SOLElapsed <= 0 {
		return 0
	}
	return float64(r.SOLEchoed) / r.SOLElapsed.Seconds()
}

// PerConsole is the bridge's RSS growth per open console (0 when none
// opened).
func (r *ConsoleResult) PerConsole() int64 {
	if r.Opened == 0 {
		return 0
	}
	return (r.RSSAfter - r.RSSBefore) / int64(r.Opened)
}

// Print writes the console table.
func (r *ConsoleResult) Print(w io.Writer) {
	fmt.Fprintf(w, "\nBenchmarkConsole: serial console through the bridge (setup %s)\n", r.Setup.Round(time.Second))
	fmt.Fprintf(w, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(w, "| guest to ssh through sshconsole (echo: client to guest and back, %d bytes checked in order) | %.0f bytes/s (%s) |\n",
		r.Echoed, r.EchoBytesPerSecond(), r.Elapsed.Round(time.Millisecond))
	if r.SOLEchoed > 0 {
		fmt.Fprintf(w, "| guest to ipmitool over SOL (echo: ipmitool sol activate to guest and back, %d bytes checked in order) | %.0f bytes/s (%s) |\n",
			r.SOLEchoed, r.SOLBytesPerSecond(), r.SOLElapsed.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "| guest to ipmitool over SOL (%d bytes) | not measured: %s |\n", r.Scenario.SOLBytes, r.SOLSkipped)
	}
	fmt.Fprintf(w, "| bridge RSS with 0 / %d consoles open | %s / %s |\n", r.Opened, mb(r.RSSBefore), mb(r.RSSAfter))
	if per := r.PerConsole(); per > 0 {
		fmt.Fprintf(w, "| RSS growth per open console | %.1f KiB |\n| open console sessions per GiB | %.0f |\n", float64(per)/1024, float64(1<<30)/float64(per))
	} else {
		fmt.Fprintf(w, "| RSS growth per open console | none measured (%d opened) |\n", r.Opened)
	}
}
