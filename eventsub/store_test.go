package eventsub

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// TestStoreCapsHoldAcrossReplicas: on a real apiserver, three stores (three
// replicas) creating 30 subscriptions of one user at once end with
// exactly the cap: every write is guarded by the Secret's
// resourceVersion, so no two replicas both take the last place. The
// HttpHeaders are in the Secret and nowhere else.
func TestStoreCapsHoldAcrossReplicas(t *testing.T) {
	c := testcluster.Shared(t, crds.Stock)
	kube, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := c.TestNamespace(t)
	const perUser = 7
	stores := make([]*Store, 3)
	for i := range stores {
		stores[i] = NewStore(kube, ns, "events", Limits{PerUser: perUser})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, limited := 0, 0
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := stores[i%3].Create(t.Context(), Subscription{Owner: "alice", Destination: fmt.Sprintf("https://r.example/%d", i),
				Headers: map[string]string{"Authorization": "Bearer x"}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case errors.Is(err, ErrLimit):
				limited++
			default:
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	subs, err := stores[0].List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if created != perUser || limited != 30-perUser || len(subs) != perUser {
		t.Errorf("created %d, limited %d, stored %d; want %d, %d, %d", created, limited, len(subs), perUser, 30-perUser, perUser)
	}
	sec, err := kube.CoreV1().Secrets(ns).Get(t.Context(), "events", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.ManagedFields[0].Manager != FieldManager {
		t.Errorf("written by %q, want %q", sec.ManagedFields[0].Manager, FieldManager)
	}
	if err := stores[1].Delete(t.Context(), subs[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := stores[2].Delete(t.Context(), subs[0].ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
}

// TestStoreReadsItsWritesFromTheWatch: a store that reads from the watch
// (every replica's, so a GET costs no apiserver request) still lists a
// subscription right after creating it and no longer lists it right after
// deleting it: a read waits for the watch to have seen the store's own
// last write. Without that wait (written left 0) the list that follows
// a create races the watch event and misses it.
func TestStoreReadsItsWritesFromTheWatch(t *testing.T) {
	c := testcluster.Shared(t, crds.Stock)
	kube, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := c.TestNamespace(t)
	w, err := Watch(t.Context(), kube, ns, "events")
	if err != nil {
		t.Fatal(err)
	}
	st := NewStore(kube, ns, "events", Limits{})
	st.ReadFrom(w)
	for i := range 20 {
		s, err := st.Create(t.Context(), Subscription{Owner: "alice", Destination: fmt.Sprintf("https://r.example/%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Get(t.Context(), s.ID); err != nil {
			t.Fatalf("Get right after Create %d: %v", i, err)
		}
		if err := st.Delete(t.Context(), s.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Get(t.Context(), s.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get right after Delete %d: %v, want ErrNotFound", i, err)
		}
	}
}
