package eventstream

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// TestResumeAfterLastEventID: a stream opened with a Last-Event-ID the
// bus holds first receives the events published after it that its
// filter and its user's scope admit, then the live ones, each once; one
// the bus does not hold starts live after the NotHeld comment.
func TestResumeAfterLastEventID(t *testing.T) {
	alice := auth.Principal{User: "alice", Scope: scope(t, "team-a", "")}
	for _, tc := range []struct {
		name, lastEventID, filter string
		want                      []string
	}{
		{"after a held event: the admitted ones after it, then live", "g1", "", []string{"p1", "g2", "live", "end"}},
		{"after a held event, filtered", "g1", "OriginResource eq '/redfish/v1/Systems/team-a.gold'", []string{"g2", "end"}},
		{"after the newest: live only", "g2", "", []string{"live", "end"}},
		{"an ID not held: the comment, then live", "gone", "", []string{"# " + NotHeld, "live", "end"}},
		{"no Last-Event-ID: live", "", "", []string{"live", "end"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus := event.NewBus(event.Config{History: 100})
			ss, err := New(Config{KeepAlive: time.Hour}, bus, vms, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range []event.Event{{ID: "g0", System: gold}, {ID: "g1", System: gold}, {ID: "o1", System: other},
				{ID: "p1", System: plain}, {ID: "g2", System: gold, Origin: "/redfish/v1/Systems/team-a.gold"}} {
				bus.Publish(e)
			}
			st, err := ss.Open(alice, tc.filter, tc.lastEventID)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			bus.Publish(event.Event{ID: "o2", System: other})
			bus.Publish(event.Event{ID: "live", System: plain})
			bus.Publish(event.Event{ID: "end", System: gold, Origin: "/redfish/v1/Systems/team-a.gold"})
			got := []string{}
			for len(got) == 0 || got[len(got)-1] != "end" {
				f, err := st.Next(t.Context())
				if err != nil {
					t.Fatalf("after %v: %v", got, err)
				}
				if f.Data == nil {
					got = append(got, "# "+f.Comment)
					continue
				}
				got = append(got, f.ID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
	}
}
