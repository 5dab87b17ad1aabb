package reliability

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// attackMaxImage is the bridge's --max-image-size in TestImportAttacks.
const attackMaxImage = 16 << 20

// TestImportAttacks: what tenants and image servers can do to the import
// path (docs/reliability.md rows 2, 3 and 8), through Redfish, on a full demo.
//
//   - one tenant's never-answering image URL, inserted into 8 VMs, does not
//     delay another tenant's import: with all 8 connected and held, the
//     other tenant's imports complete before any client gives up on one of
//     them (the bridge used to HEAD every URL on its 2 shared workers with
//     a 10 s timeout: 0.5 s became 40 s), proved by ordering, not by time;
//   - a gzip bomb, a 1 PiB Content-Length and an endless body fail their
//     Task with a message that says why, and no PVC is sized for them.
func TestImportAttacks(t *testing.T) {
	for _, v := range []crds.Variant{crds.Stock, crds.MapList} {
		t.Run(string(v), func(t *testing.T) { testImportAttacks(t, v) })
	}
}

func testImportAttacks(t *testing.T, v crds.Variant) {
	ctx := t.Context()
	env := startDemoWith(t, demo.Options{Variant: v, MaxImageSize: attackMaxImage})
	dyn := dynamic.NewForConfigOrDie(env.Cluster.Admin)
	for ns, n := range map[string]int{"tenant-a": 11, "tenant-b": 1} {
		if err := env.Cluster.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		if err := demo.CreateSampleVMs(ctx, dyn, ns, n); err != nil {
			t.Fatal(err)
		}
	}
	c := newClient(t, env.URL, "")
	addUser(t, env, "alice", "alice-password", "tenant-a")
	addUser(t, env, "bob", "bob-password", "tenant-b")
	alice, bob := auth{user: "alice", password: "alice-password"}, auth{user: "bob", password: "bob-password"}
	waitLogin(t, c, alice)
	waitLogin(t, c, bob)
	silent := newSilentServer(t)
	hostile := newHostileImages(t)
	image := env.Images.URL + "/images/boot.iso"
	bobVM := system.Key{Namespace: "tenant-b", Name: "vm-0"}

	t.Run("a never-answering URL in 8 VMs does not delay another tenant", func(t *testing.T) {
		control := importTimes(t, c, bob, bobVM, image, 1)
		var tasks []string
		for i := range 8 {
			key := system.Key{Namespace: "tenant-a", Name: "vm-" + strconv.Itoa(i)}
			tasks = append(tasks, insert(t, c, alice, key, silent.URL))
		}
		// The attack is on: each of alice's 8 imports has connected and is
		// held, its connection accepted and never answered.
		waitFor(t, "alice's 8 imports held by the silent server", func() (bool, string) {
			n := silent.accepted.Load()
			return n >= 8, strconv.FormatInt(n, 10) + " connections accepted"
		})
		attacked := importTimes(t, c, bob, bobVM, image, 3)
		// Ordering, not time: bob's imports completed while every connection
		// to the silent server was still held. Had bob's import waited on
		// alice's (the bridge used to HEAD every URL on its 2 shared workers
		// with a 10 s timeout), it could only have completed after a client
		// gave up on one of them.
		if n := silent.dropped.Load(); n > 0 {
			t.Errorf("%d of the %d connections to the silent server were given up before bob's imports completed: bob's import waited on alice's", n, silent.accepted.Load())
		}
		for _, task := range tasks {
			if st, _ := taskState(t, c, alice, task); st != "Running" && st != "New" && st != "Pending" {
				t.Errorf("alice's task %s is %s, want it still running", task, st)
			}
		}
		// The times are logged, not bounded: a loaded machine slows both.
		t.Logf("RELIABILITY tenant isolation: bob's import %v (control) vs %v (slowest of 3, with alice's 8 silent imports held); silent server accepted %d connections, %d given up",
			control[0].Round(time.Millisecond), slices.Max(attacked).Round(time.Millisecond), silent.accepted.Load(), silent.dropped.Load())
		for i := range 8 {
			eject(t, c, alice, system.Key{Namespace: "tenant-a", Name: "vm-" + strconv.Itoa(i)})
		}
	})

	t.Run("hostile image servers fail their Task", func(t *testing.T) {
		kube := kubernetes.NewForConfigOrDie(env.Cluster.Admin)
		for i, tc := range []struct{ path, want string }{
			{"/bomb.iso", `Content-Encoding "gzip"`},
			{"/one-pib.iso", "image is 1125899906842624 bytes (1Pi), more than the maximum image size 16Mi"},
			{"/endless.iso", "more than the maximum image size 16Mi (stopped after"},
		} {
			key := system.Key{Namespace: "tenant-a", Name: "vm-" + strconv.Itoa(8+i)}
			task := insert(t, c, alice, key, hostile.URL+tc.path)
			var state, body string
			waitFor(t, "task of "+tc.path+" finished", func() (bool, string) {
				state, body = taskState(t, c, alice, task)
				return state == "Exception" || state == "Completed", state
			})
			if state != "Exception" || !strings.Contains(body, tc.want) {
				t.Errorf("%s: Task %s, want Exception with %q: %s", tc.path, state, tc.want, body)
			}
			// A failed import's PVC is released once the failure is
			// recorded (row 130); until then it must not be sized for the
			// refused image.
			pvc, err := kube.CoreV1().PersistentVolumeClaims(key.Namespace).Get(ctx, media.ClaimName(key, media.DefaultSlot), metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				t.Fatal(err)
			default:
				if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(resource.MustParse("8Gi")) > 0 {
					t.Errorf("%s: PVC sized %s for a refused image", tc.path, got.String())
				}
			}
			eject(t, c, alice, key)
		}
		t.Logf("RELIABILITY hostile images: the bomb is %d bytes on the wire (200 MiB inflated); %d body bytes sent in all, the endless body included",
			hostile.bombLen, hostile.sent.Load())
	})
}

// importTimes inserts image into key n times and returns how long each
// took from the 202 to its Task Completed (ejecting after each).
func importTimes(t *testing.T, c *client, a auth, key system.Key, image string, n int) []time.Duration {
	t.Helper()
	var out []time.Duration
	for range n {
		start := time.Now()
		task := insert(t, c, a, key, image)
		waitFor(t, "import into "+key.String(), func() (bool, string) {
			st, body := taskState(t, c, a, task)
			if st == "Exception" {
				t.Fatalf("import into %s failed: %s", key, body)
			}
			return st == "Completed", st
		})
		out = append(out, time.Since(start))
		eject(t, c, a, key)
	}
	return out
}

// insert sends InsertMedia and returns the Task's path.
func insert(t *testing.T, c *client, a auth, key system.Key, image string) string {
	t.Helper()
	r := c.do(t.Context(), t, http.MethodPost, "/redfish/v1/Systems/"+key.ID()+"/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", a,
		`{"Image":"`+image+`"}`)
	if r.status != http.StatusAccepted || r.header.Get("Location") == "" {
		t.Fatalf("insert %s into %s: %d %s", image, key, r.status, r.body)
	}
	return strings.TrimPrefix(r.header.Get("Location"), c.base)
}

func eject(t *testing.T, c *client, a auth, key system.Key) {
	t.Helper()
	r := c.do(t.Context(), t, http.MethodPost, "/redfish/v1/Systems/"+key.ID()+"/VirtualMedia/cd0/Actions/VirtualMedia.EjectMedia", a, `{}`)
	if r.status/100 != 2 {
		t.Fatalf("eject %s: %d %s", key, r.status, r.body)
	}
}

// taskState reads a Task: its TaskState and its messages' resolutions
// (where a failed import says why).
func taskState(t *testing.T, c *client, a auth, task string) (string, string) {
	t.Helper()
	r := c.do(t.Context(), t, http.MethodGet, task, a, "")
	var doc struct {
		TaskState string
		Messages  []struct{ Resolution string }
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("GET %s: %d %s", task, r.status, r.body)
	}
	var res []string
	for _, m := range doc.Messages {
		res = append(res, m.Resolution)
	}
	return doc.TaskState, strings.Join(res, "; ")
}

// silentServer accepts TCP connections and never answers on them; dropped
// counts the ones a client closed (gave up on) while the server held them.
type silentServer struct {
	URL      string
	accepted atomic.Int64
	dropped  atomic.Int64
}

func newSilentServer(t *testing.T) *silentServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentServer{URL: "http://" + l.Addr().String() + "/never.iso"}
	var mu sync.Mutex
	var conns []net.Conn
	var closing atomic.Bool
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			go func() {
				// A read ends when the client closes the connection (or
				// at cleanup): the request is read and never answered.
				_, _ = io.Copy(io.Discard, conn)
				if !closing.Load() {
					s.dropped.Add(1)
				}
			}()
		}
	}()
	t.Cleanup(func() {
		closing.Store(true)
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return s
}

// hostileImages serves /bomb.iso (200 MiB of zeros gzipped, ~200 KiB, with
// Content-Encoding gzip whatever was asked), /one-pib.iso (Content-Length
// 1 PiB, no body) and /endless.iso (no Content-Length, never ends).
type hostileImages struct {
	URL     string
	bombLen int
	sent    atomic.Int64
}

func newHostileImages(t *testing.T) *hostileImages {
	t.Helper()
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	chunk := make([]byte, 1<<20)
	for range 200 {
		if _, err := zw.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	h := &hostileImages{bombLen: bomb.Len()}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bomb.iso":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(bomb.Len()))
			n, _ := w.Write(bomb.Bytes())
			h.sent.Add(int64(n))
		case "/one-pib.iso":
			w.Header().Set("Content-Length", strconv.FormatInt(1<<50, 10))
			w.WriteHeader(http.StatusOK)
		case "/endless.iso":
			block := bytes.Repeat([]byte("endless "), 8<<10)
			for r.Context().Err() == nil {
				n, err := w.Write(block)
				h.sent.Add(int64(n))
				if err != nil {
					return
				}
			}
		default:
			http.NotFound(w, r)
		}
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	h.URL = "http://" + l.Addr().String()
	return h
}
