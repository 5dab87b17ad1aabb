package backend_test

import (
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// BenchmarkGetSystemMiss is one GET System rendered afresh from the
// inventory's cached VM (a query is never served kept: the path of a
// kept body's miss) through the whole service on a real apiserver
// (REDFISH_BRIDGE_BIN; go test -run '^$' -bench GetSystemMiss -benchmem
// ./backend/).
func BenchmarkGetSystemMiss(b *testing.B) {
	s := newStack(b, crds.MapList, nil)
	benchStackGET(b, s, s.uri+"?fresh")
}

// BenchmarkSystemsCollectionMiss is one GET of the Systems collection of
// 1000 VMs built afresh from the inventory (a query other than paging is
// never kept).
func BenchmarkSystemsCollectionMiss(b *testing.B) {
	s := newStack(b, crds.MapList, nil)
	if err := demo.CreateFirmwareVMs(b.Context(), s.admin, stackNS, 999); err != nil {
		b.Fatal(err)
	}
	for {
		vms, err := s.inv.ListVMs(stackNS, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(vms) == 1000 {
			break
		}
		time.Sleep(50 * time.Millisecond) // setup, not a measurement
	}
	benchStackGET(b, s, "/redfish/v1/Systems?fresh")
}

func benchStackGET(b *testing.B, s *stack, uri string) {
	b.Helper()
	req := httptest.NewRequestWithContext(b.Context(), http.MethodGet, uri, nil)
	req.SetBasicAuth("ironic", "secret")
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", uri, rec.Code, rec.Body)
		}
	}
	// The process's CPU time per GET (the apiserver is another process):
	// on a shared machine ns/op counts the waits for a core too.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the test process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
