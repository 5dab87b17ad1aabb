package bench_test

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
)

// downloadTarget is the share of curl's MB/s the downloader must reach.
const downloadTarget = 0.8

// downloadRSSBound is the peak RSS the downloader may reach, whatever
// the image's size: it streams.
const downloadRSSBound = 64 << 20

// BenchmarkImageDownload: the import pod's downloader, `redfish-bridge
// import` (the image's binary, as the pod runs it), against `curl -o`:
// one BENCH_DOWNLOAD_MIB (default 1024) MiB image served over loopback
// plain HTTP from a file, each written to a file on the same disk (the
// benchmark's temporary directory), BENCH_DOWNLOAD_ROUNDS (default 3)
// rounds alternating the two; it reports the best MB/s of each, their
// ratio (target: the downloader at >= 80% of curl) and the downloader's
// peak RSS (bounded: it streams). The downloader also hashes (sha256)
// and fsyncs the image before renaming it into place; curl does neither,
// so a third line times curl followed by sync of its file, for reference.
// Disk: the image and one copy at a time (~2 GiB at the default).
func BenchmarkImageDownload(b *testing.B) {
	mib := envInt(b, "BENCH_DOWNLOAD_MIB", 1024)
	rounds, err := strconv.Atoi(env("BENCH_DOWNLOAD_ROUNDS", "3"))
	if err != nil || rounds < 1 {
		b.Fatalf("BENCH_DOWNLOAD_ROUNDS %q: want a positive number", env("BENCH_DOWNLOAD_ROUNDS", "3"))
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("curl not installed")
	}
	dir := b.TempDir()
	bin, err := bridgeproc.Build(b.Context(), dir)
	if err != nil {
		b.Fatal(err)
	}
	size := int64(mib) << 20
	url := serveImageFile(b, filepath.Join(dir, "image.iso"), size)
	for b.Loop() {
		var best struct{ bridge, curl, curlSync float64 }
		var peak int64
		for round := range rounds {
			dest := filepath.Join(dir, "out-"+strconv.Itoa(round))
			took, rss := timeDownload(b, dest, size, bin, "import", "--url="+url, "--dest="+dest, "--termination-log="+filepath.Join(dir, "termination-log"))
			best.bridge, peak = max(best.bridge, mbps(size, took)), max(peak, rss)
			took, _ = timeDownload(b, dest, size, curl, "-sS", "--fail", "-o", dest, url)
			best.curl = max(best.curl, mbps(size, took))
			took, _ = timeDownload(b, dest, size, "sh", "-c", `curl -sS --fail -o "$1" "$2" && sync "$1"`, "curl-sync", dest, url)
			best.curlSync = max(best.curlSync, mbps(size, took))
		}
		ratio := best.bridge / best.curl
		reached := "REACHED"
		if ratio < downloadTarget {
			reached = "NOT reached"
		}
		fmt.Printf("\n=== image download, one %d MiB image over loopback HTTP to %s, best of %d ===\n", mib, dir, rounds)
		fmt.Printf("%-44s %.0f MB/s\n", "curl -o", best.curl)
		fmt.Printf("%-44s %.0f MB/s (as durable as the downloader's; not the target)\n", "curl -o, then sync FILE", best.curlSync)
		fmt.Printf("%-44s %.0f MB/s (%.0f%% of curl; target >= %.0f%%: %s)\n", "redfish-bridge import (sha256, fsync)", best.bridge, 100*ratio, 100*downloadTarget, reached)
		fmt.Printf("%-44s %.1f MiB (bound %d MiB)\n", "redfish-bridge import peak RSS", float64(peak)/(1<<20), downloadRSSBound>>20)
		if peak > downloadRSSBound {
			b.Errorf("the downloader's peak RSS %d bytes is above %d: it does not stream", peak, downloadRSSBound)
		}
		b.ReportMetric(best.bridge, "import-MB/s")
		b.ReportMetric(best.curl, "curl-MB/s")
		b.ReportMetric(best.curlSync, "curl-sync-MB/s")
		b.ReportMetric(float64(peak)/(1<<20), "import-peak-RSS-MiB")
	}
}

// mbps is size bytes in took, in MB/s (10^6 bytes).
func mbps(size int64, took time.Duration) float64 { return float64(size) / took.Seconds() / 1e6 }

// timeDownload runs name with args (a download into dest), checks dest
// has size bytes, removes it, and returns how long the command took and
// its peak RSS.
func timeDownload(b *testing.B, dest string, size int64, name string, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), name, args...) // the benchmark's own commands
	began := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(began)
	if err != nil {
		b.Fatalf("%s: %v\n%s", filepath.Base(name), err, out)
	}
	fi, err := os.Stat(dest)
	if err != nil || fi.Size() != size {
		b.Fatalf("%s: %s: %v, %d bytes, want %d", filepath.Base(name), dest, err, fi.Size(), size)
	}
	if err := os.Remove(dest); err != nil {
		b.Fatal(err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // KiB on Linux
	}
	return took, rss
}

// serveImageFile writes a size-byte file of random data at path and serves
// it on loopback plain HTTP (Content-Length, Last-Modified; sendfile), and
// returns its URL. The file is read once so the runs find it in the page
// cache.
func serveImageFile(b *testing.B, path string, size int64) string {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	chunk := make([]byte, 1<<20)
	for written := int64(0); written < size; written += int64(len(chunk)) {
		_, _ = rand.Read(chunk)
		if _, err := w.Write(chunk[:min(int64(len(chunk)), size-written)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, path) }), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { _ = srv.Close() })
	// Read once, into the page cache (streamed: the benchmark's own RSS
	// stays small, and a child's peak RSS starts from it).
	if f, err = os.Open(path); err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, f)
	if err = errors.Join(err, f.Close()); err != nil {
		b.Fatal(err)
	}
	return "http://" + l.Addr().String() + "/image.iso"
}
