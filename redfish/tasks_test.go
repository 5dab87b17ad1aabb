package redfish

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// taskJSONBodyImages are image URLs whose Go quoting is not JSON: non-BMP
// runes (U+E0001 LANGUAGE TAG, an emoji), non-printable ones, quotes and
// backslashes, HTML characters.
var taskJSONBodyImages = []string{
	"http://img.example/boot.iso",
	"http://img.example/\U000E0001.iso",
	"http://img.example/\U0001F600.iso",
	"http://img.example/a\u00ad\u200b\u2028\u2029b.iso",
	"http://img.example/a\x7fb.iso",
	`http://img.example/"quoted"\back.iso`,
	"http://img.example/a<b>&c.iso",
}

// checkTaskJSONBody renders the task of a slot holding image and checks
// that Payload.JsonBody is JSON naming exactly that image.
func checkTaskJSONBody(t *testing.T, image string) {
	t.Helper()
	v := SystemView{Key: system.Key{Namespace: "team-a", Name: "vm1"}}
	sl := system.MediaSlot{Slot: "cd0", Image: image, InsertID: "t1", Phase: system.MediaImporting}
	raw, ok := renderTask(v, sl)["Payload"].(obj)["JsonBody"].(string)
	if !ok {
		t.Fatalf("Payload.JsonBody missing or not a string")
	}
	if !json.Valid([]byte(raw)) {
		t.Fatalf("Payload.JsonBody for %q is not JSON: %s", image, raw)
	}
	var body struct{ Image string }
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		t.Fatal(err)
	}
	if utf8.ValidString(image) && body.Image != image {
		t.Errorf("Payload.JsonBody names %q, the insert was %q", body.Image, image)
	}
}

func TestTaskPayloadJSONBody(t *testing.T) {
	for _, image := range taskJSONBodyImages {
		t.Run(image, func(t *testing.T) { checkTaskJSONBody(t, image) })
	}
}

func FuzzTaskPayloadJSONBody(f *testing.F) {
	for _, image := range taskJSONBodyImages {
		f.Add(image)
	}
	f.Fuzz(checkTaskJSONBody)
}

// TestTaskPercentComplete: a running import's progress (reported by CDI)
// is the Task's PercentComplete; none while unknown, 100 once Ready.
func TestTaskPercentComplete(t *testing.T) {
	v := SystemView{Key: system.Key{Namespace: "team-a", Name: "vm1"}}
	for _, tc := range []struct {
		phase   system.MediaPhase
		percent int
		want    any
	}{
		{system.MediaPending, 0, nil},
		{system.MediaImporting, 0, nil},
		{system.MediaImporting, 42, 42},
		{system.MediaReady, 0, 100},
		{system.MediaFailed, 0, nil},
	} {
		sl := system.MediaSlot{Slot: "cd0", Image: "http://img.example/a.iso", InsertID: "t1", Phase: tc.phase, Percent: tc.percent}
		if got := renderTask(v, sl)["PercentComplete"]; got != tc.want {
			t.Errorf("%s at %d%%: PercentComplete %v, want %v", tc.phase, tc.percent, got, tc.want)
		}
	}
}
