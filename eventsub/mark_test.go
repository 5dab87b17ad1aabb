package eventsub

import (
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// TestSetDelivered: the delivery's marks land in the subscriptions'
// entries in one write, a client's later change keeps the mark, and a
// deleted subscription's mark is skipped (no entry made for it).
func TestSetDelivered(t *testing.T) {
	c := testcluster.Shared(t, crds.Stock)
	kube, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := c.TestNamespace(t)
	st := NewStore(kube, ns, "events", Limits{})
	a, err := st.Create(t.Context(), Subscription{Owner: "alice", Destination: "https://r.example/a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Create(t.Context(), Subscription{Owner: "alice", Destination: "https://r.example/b"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	if err := st.SetDelivered(t.Context(), map[string]Mark{a.ID: {ID: "e1", Published: at}, b.ID: {ID: "e2", Published: at},
		"0000000000000000": {ID: "gone"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Patch(t.Context(), a.ID, Patch{Context: ptr("changed")}); err != nil {
		t.Fatal(err)
	}
	subs, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range subs {
		if s.Delivered == nil || !s.Delivered.Published.Equal(at) {
			t.Errorf("subscription %s: mark %+v, want one published at %s", s.ID, s.Delivered, at)
			continue
		}
		got[s.ID] = s.Delivered.ID
	}
	if want := map[string]string{a.ID: "e1", b.ID: "e2"}; len(got) != 2 || got[a.ID] != "e1" || got[b.ID] != "e2" {
		t.Errorf("marks %v, want %v (and no subscription made for a deleted one)", got, want)
	}
}

func ptr[T any](v T) *T { return &v }
