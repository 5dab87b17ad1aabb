package testcluster_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// TestRestart stops and starts kube-apiserver, then etcd, and checks that a
// client made before keeps working on the same address with the same
// credentials, that nothing stored is lost, and that the cluster really was
// down in between.
func TestRestart(t *testing.T) {
	c := testcluster.ForTest(t, crds.Stock)
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("default")
	put := func(ctx context.Context, name string) error {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": name}}, metav1.CreateOptions{})
		return err
	}
	if err := put(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	host := c.Admin.Host

	err = c.RestartAPIServer(ctx, func() {
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := put(short, "while-apiserver-down"); err == nil {
			t.Error("a write succeeded while kube-apiserver was stopped")
		} else {
			t.Logf("write while kube-apiserver was down: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin.Host != host {
		t.Errorf("host changed over the restart: %s -> %s", host, c.Admin.Host)
	}
	if err := put(ctx, "after-apiserver"); err != nil {
		t.Fatalf("write with the old client after the apiserver restart: %v", err)
	}

	err = c.RestartEtcd(ctx, func() {
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := put(short, "while-etcd-down"); err == nil {
			t.Error("a write succeeded while etcd was stopped")
		} else {
			t.Logf("write while etcd was down: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// kube-apiserver reconnects to etcd by itself; give it time.
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := put(ctx, "after-etcd")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write succeeded within 60s of restarting etcd: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}

	for _, name := range []string{"before", "after-apiserver", "after-etcd"} {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil || cm.Data["k"] != name {
			t.Errorf("ConfigMap %s after both restarts: %v %v", name, cm.Data, err)
		}
	}
	if err := c.StartAPIServer(ctx); err == nil {
		t.Error("StartAPIServer on a running kube-apiserver did not fail")
	}
	if rss, err := c.APIServerRSS(); err != nil || rss == 0 {
		t.Errorf("restarted kube-apiserver RSS: %d, %v", rss, err)
	}
}
