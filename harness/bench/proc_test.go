package bench

import (
	"os"
	"testing"
)

// TestProcReaders checks the /proc readers against this process: the same
// numbers through both paths, and plausible values.
func TestProcReaders(t *testing.T) {
	rss, err := SelfRSS()
	if err != nil {
		t.Fatal(err)
	}
	viaPid, err := ProcRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 1<<20 || viaPid <= 1<<20 {
		t.Errorf("RSS self %d, by pid %d: want more than 1 MiB", rss, viaPid)
	}
	buf := make([]byte, 0)
	for i := range 5_000_000 { // burn a little CPU so both counters move
		buf = append(buf[:0], byte(i))
	}
	self, err := SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	stat, err := ProcCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self <= 0 {
		t.Errorf("SelfCPU = %s, want > 0", self)
	}
	// /proc/<pid>/stat has 10 ms resolution and is read after getrusage.
	if stat < 0 || stat > self+self/2+100_000_000 {
		t.Errorf("ProcCPU = %s, SelfCPU = %s: disagree", stat, self)
	}
}
