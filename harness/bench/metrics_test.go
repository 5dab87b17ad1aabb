package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRequests(t *testing.T) {
	raw := []byte(`# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachines",scope="resource",subresource="",verb="APPLY",version="v1"} 12
apiserver_request_total{code="409",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachines",scope="resource",subresource="",verb="APPLY",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachines",scope="resource",subresource="status",verb="PATCH",version="v1"} 4
apiserver_request_duration_seconds_count{verb="APPLY"} 99
`)
	got, err := ParseRequests(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := APIServerCounts{"APPLY virtualmachines": 15, "PATCH virtualmachines/status": 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseRequests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(APIServerCounts{"APPLY virtualmachines": 5}, got.Sub(APIServerCounts{"APPLY virtualmachines": 10, "PATCH virtualmachines/status": 4})); diff != "" {
		t.Errorf("Sub (-want +got):\n%s", diff)
	}
	if got.Total() != 19 {
		t.Errorf("Total = %v, want 19", got.Total())
	}
}
