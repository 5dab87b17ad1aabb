package download

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The import pod's progress: the pod has no API credentials, so it tells
// its progress the way any container can, on its standard output, which the
// bridge reads back as the pod's log (pods/log, media/podimport/progress.go). The line is
//
//	progress <written> <total>
//
// with the bytes of the image written so far and the size the server
// announced (-1: unknown), printed at most once per [ProgressInterval] and
// only when it changed. An import waiting for another pod's download of
// the same image cache entry prints that download's progress: the
// downloading pod writes the same line into the entry's file
// [cacheProgress], the waiting pods read it while they wait for the lock.

// ProgressInterval is how often an import prints (and a filling import
// records) its progress at most.
var ProgressInterval = time.Second

// progressPrefix starts a progress line.
const progressPrefix = "progress "

// cacheProgress is the cache entry's file with the progress line of the
// download filling it.
const cacheProgress = "progress"

// FormatProgress is the progress line of written bytes of total (-1:
// unknown), without its newline.
func FormatProgress(written, total int64) string {
	return progressPrefix + strconv.FormatInt(written, 10) + " " + strconv.FormatInt(total, 10)
}

// ParseProgress reads the last progress line of an import's output; ok is
// false when it has none.
func ParseProgress(out []byte) (written, total int64, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(strings.TrimPrefix(sc.Text(), progressPrefix))
		if !strings.HasPrefix(sc.Text(), progressPrefix) || len(f) != 2 {
			continue
		}
		w, werr := strconv.ParseInt(f[0], 10, 64)
		t, terr := strconv.ParseInt(f[1], 10, 64)
		if werr == nil && terr == nil && w >= 0 {
			written, total, ok = w, t, true
		}
	}
	return written, total, ok
}

// ProgressPercent is written of total as a whole percentage below 100 (0:
// unknown); 100 is for the finished import, as media reads CDI's progress.
func ProgressPercent(written, total int64) int {
	if total <= 0 || written <= 0 {
		return 0
	}
	return int(min(written*100/total, 99))
}

// progressTicker passes the latest (written, total) it was told to emit,
// at most once per interval and only when it changed, and once more on
// stop: a download that stalls after a burst still shows where it stands.
type progressTicker struct {
	mu             sync.Mutex
	written, total int64
	emitted        int64
	stopOnce       sync.Once
	stopped        chan struct{}
	done           chan struct{}
	emit           func(written, total int64)
}

func newProgressTicker(interval time.Duration, emit func(written, total int64)) *progressTicker {
	p := &progressTicker{emitted: -1, written: -1, stopped: make(chan struct{}), done: make(chan struct{}), emit: emit}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				p.flush()
			case <-p.stopped:
				p.flush()
				return
			}
		}
	}()
	return p
}

// report records the latest progress.
func (p *progressTicker) report(written, total int64) {
	p.mu.Lock()
	p.written, p.total = written, total
	p.mu.Unlock()
}

func (p *progressTicker) flush() {
	p.mu.Lock()
	w, t, changed := p.written, p.total, p.written != p.emitted
	p.emitted = w
	p.mu.Unlock()
	if changed && w >= 0 {
		p.emit(w, t)
	}
}

// stop emits what changed last and ends the ticker.
func (p *progressTicker) stop() {
	p.stopOnce.Do(func() { close(p.stopped) })
	<-p.done
}

// PrintProgress prints progress lines to w (see the top of this file):
// report is an [ImportRequest].Progress; stop prints the last change and
// must be called once the import ended.
func PrintProgress(w io.Writer) (report func(written, total int64), stop func()) {
	var mu sync.Mutex
	p := newProgressTicker(ProgressInterval, func(written, total int64) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, FormatProgress(written, total))
	})
	return p.report, p.stop
}

// recordProgress wraps report (nil: none) to also record the progress in
// the cache entry dir's [cacheProgress] file for the imports waiting for
// it; stop ends the recording.
func recordProgress(dir string, report func(written, total int64)) (wrapped func(written, total int64), stop func()) {
	p := newProgressTicker(ProgressInterval, func(written, total int64) {
		_ = writeFileAtomic(filepath.Join(dir, cacheProgress), []byte(FormatProgress(written, total)+"\n"))
	})
	return func(written, total int64) {
		p.report(written, total)
		if report != nil {
			report(written, total)
		}
	}, p.stop
}

// echoProgress passes the progress recorded in the cache entry dir by the
// download filling it to report (nil: nothing to do) while this import
// waits for the entry's lock, until stop.
func echoProgress(ctx context.Context, dir string, report func(written, total int64)) (stop func()) {
	if report == nil || !echoCacheProgress {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(ProgressInterval)
		defer tick.Stop()
		for {
			if b, err := os.ReadFile(filepath.Join(dir, cacheProgress)); err == nil {
				if w, t, ok := ParseProgress(b); ok {
					report(w, t)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// echoCacheProgress is switched off only by the negative control of the
// waiting imports' progress.
var echoCacheProgress = true
