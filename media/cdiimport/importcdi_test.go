package cdiimport

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/media/importer"
)

// TestDataVolumeStatus reads CDI's DataVolume status as an import state:
// progress "NN.N%" (whole percent, below 100), Succeeded, Failed, and an
// importer that failed once (CDI retries forever; the slot fails at once).
func TestDataVolumeStatus(t *testing.T) {
	dv := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "vm1-media-cd0"}, "status": status}}
	}
	for _, tc := range []struct {
		name    string
		status  map[string]any
		state   importer.State
		percent int
		reason  string
	}{
		{"no status yet", map[string]any{}, importer.Running, 0, ""},
		{"progress unknown", map[string]any{"phase": "ImportInProgress", "progress": "N/A"}, importer.Running, 0, ""},
		{"progress", map[string]any{"phase": "ImportInProgress", "progress": "45.73%"}, importer.Running, 45, ""},
		{"progress at 100 before Succeeded", map[string]any{"phase": "ImportInProgress", "progress": "100.0%"}, importer.Running, 99, ""},
		{"garbage progress", map[string]any{"phase": "ImportInProgress", "progress": "-3%"}, importer.Running, 0, ""},
		{"succeeded", map[string]any{"phase": "Succeeded", "progress": "100.0%"}, importer.Succeeded, 0, ""},
		{"importer failed once", map[string]any{"phase": "ImportInProgress", "restartCount": int64(1), "conditions": []any{
			map[string]any{"type": "Ready", "status": "False"},
			map[string]any{"type": "Running", "status": "False", "reason": "Error", "message": "Unable to connect to http data source: expected status code 200, got 404"},
		}}, importer.Failed, 0, "CDI DataVolume vm1-media-cd0 failed: Unable to connect to http data source: expected status code 200, got 404"},
		{"importer ended with an error, not yet restarted", map[string]any{"phase": "ImportInProgress", "conditions": []any{
			map[string]any{"type": "Ready", "status": "False"},
			map[string]any{"type": "Running", "status": "False", "reason": "Error", "message": "Unable to process data: Virtual image size 9 is larger than the reported available storage 8. A larger PVC is required."},
		}}, importer.Failed, 0, "CDI DataVolume vm1-media-cd0 failed: Unable to process data: Virtual image size 9 is larger than the reported available storage 8. A larger PVC is required."},
		{"importer not started yet", map[string]any{"phase": "ImportScheduled", "conditions": []any{
			map[string]any{"type": "Running", "status": "False", "reason": "Pending"},
		}}, importer.Running, 0, ""},
		{"phase Failed without message", map[string]any{"phase": "Failed"}, importer.Failed, 0, "CDI DataVolume vm1-media-cd0 failed: phase Failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typed, err := asDataVolume(dv(tc.status))
			if err != nil {
				t.Fatal(err)
			}
			got := dataVolumeStatus(typed)
			if got.State != tc.state || got.Percent != tc.percent || got.Reason != tc.reason {
				t.Errorf("got state %d percent %d reason %q, want %d %d %q", got.State, got.Percent, got.Reason, tc.state, tc.percent, tc.reason)
			}
		})
	}
}
