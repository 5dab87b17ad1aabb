package bench_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/bench"
)

func TestParseGauges(t *testing.T) {
	const full = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 87
go_memstats_heap_alloc_bytes 4.2991616e+07
go_memstats_heap_alloc_bytes_total 1.2e+09
go_memstats_heap_inuse_bytes 5.0331648e+07
go_memstats_sys_bytes 8.1e+07
go_gc_duration_seconds{quantile="0.5"} 0.0003
`
	tests := []struct {
		name    string
		raw     string
		want    bench.Gauges
		wantErr bool
	}{
		{name: "all there", raw: full, want: bench.Gauges{HeapAlloc: 42991616, HeapInuse: 50331648, GoSys: 81000000, Goroutines: 87}},
		{name: "heap missing", raw: "go_goroutines 3\ngo_memstats_sys_bytes 1\n", wantErr: true},
		{name: "not a number", raw: "go_goroutines many\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bench.ParseGauges([]byte(tt.raw))
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseGauges error = %v, want error %t", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseGauges (-want +got):\n%s", diff)
			}
		})
	}
}
