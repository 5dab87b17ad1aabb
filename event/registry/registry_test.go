package registry

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	if got := ResourceStatusChangedWarning.Format("ns.vm", "Warning"); got != "The health of resource `ns.vm` has changed to Warning." {
		t.Errorf("Format = %q", got)
	}
	if got := ResourcePoweredOn.ID(); got != "ResourceEvent.1.3.0.ResourcePoweredOn" {
		t.Errorf("ID = %q", got)
	}
	if got := TaskAborted.ID(); got != "TaskEvent.1.0.3.TaskAborted" {
		t.Errorf("ID = %q", got)
	}
	// An argument that looks like a placeholder is not expanded again.
	if got := TaskProgressChanged.Format("%2", "40"); got != "The task with Id '%2' has changed to progress 40 percent complete." {
		t.Errorf("Format = %q", got)
	}
	if got := ResourceStatusChangedOK.Format("%2", "OK"); got != "The health of resource '%2' has changed to OK." {
		t.Errorf("Format = %q", got)
	}
}

func TestJSONListsEveryMessage(t *testing.T) {
	for _, r := range []*Registry{ResourceEvent, TaskEvent} {
		raw, err := r.JSON()
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			ID       string                    `json:"Id"`
			Messages map[string]map[string]any `json:"Messages"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.ID != r.ID() || len(doc.Messages) != len(r.Messages) {
			t.Errorf("%s: Id %q, %d messages, want %d", r.ID(), doc.ID, len(doc.Messages), len(r.Messages))
		}
		for _, m := range r.Messages {
			if n := strings.Count(m.Message, "%"); n != len(m.ParamTypes) {
				t.Errorf("%s: %d placeholders, %d args", m.ID(), n, len(m.ParamTypes))
			}
		}
	}
}
