package sim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/vncscreen"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// virt-handler's console server, as KubeVirt v1.9's virt-api dials it for
// the console and vnc subresources (see package kubevirt's console.go):
// HTTPS on 127.0.0.1 at the --console-server-port of the DaemonSet
// testcluster.HandlerDaemonSet, with virt-handler's serving certificate
// (Secret kubevirt-virt-handler-server-certs), requiring a client
// certificate KubeVirt's CA (ConfigMap kubevirt-ca) signed for
// kubevirt.io:system:client:virt-handler; the Pod virt-api looks up on
// NodeName (label kubevirt.io=virt-handler, status.podIP 127.0.0.1). Each
// route upgrades to a WebSocket (subprotocol plain.kubevirt.io, binary
// messages) and gets the VMI, running on NodeName, and the stream. As in
// virt-handler, a VMI has one connection per route: a new one closes the
// one before it.
//
// One server serves a port for every Simulator of this process (a shared
// test cluster runs several, one per namespace set): the first to run
// starts it, the last to stop ends it and deletes the Pod.

// routes are the console server's WebSocket routes by subresource. A
// route serves one connection: vmi is the VMI (running on NodeName), conn
// the WebSocket's bytes (binary messages); it returns when conn fails or
// ctx ends (a newer connection to the same VMI and route, or the server's
// end). Another route (VNC: RFB) plugs in with one line here.
var routes = map[string]func(cs *consoleServer, ctx context.Context, vmi *unstructured.Unstructured, conn io.ReadWriter) error{
	kubevirt.ConsoleSubresource: (*consoleServer).serveSerial,
	kubevirt.VNCSubresource:     (*consoleServer).serveVNC, // screen.go
}

// handlerPodName is the virt-handler Pod on NodeName.
const handlerPodName = "virt-handler-" + NodeName

// consoleServers are the running console servers by port.
var consoleServers = struct {
	mu     sync.Mutex
	byPort map[int]*consoleServer
}{byPort: map[int]*consoleServer{}}

// consoleServer is virt-handler's console server on one port.
type consoleServer struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
	log  *slog.Logger
	srv  *http.Server
	refs int // Simulators using it; guarded by consoleServers.mu

	mu     sync.Mutex
	active map[connKey]chan struct{} // a connection's stop channel
	guests map[types.UID]*guest
	screen map[types.UID]*vncscreen.Screen // screen.go
}

// connKey names a VMI's connection on one route.
type connKey struct {
	route string
	uid   types.UID
}

// serveConsoles starts (or joins) the console server the cluster's
// virt-handler DaemonSet names, until ctx ends. A cluster without the
// DaemonSet (no virt-api) has no console server.
func (s *Simulator) serveConsoles(ctx context.Context) error {
	ds, err := s.kube.AppsV1().DaemonSets(testcluster.KubeVirtNamespace).Get(ctx, testcluster.HandlerDaemonSet, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s.log.DebugContext(ctx, "no virt-handler DaemonSet: no console server")
		return nil
	}
	if err != nil {
		return fmt.Errorf("sim: virt-handler DaemonSet: %w", err)
	}
	port, err := consoleServerPort(ds.Spec.Template.Spec.Containers)
	if err != nil {
		return err
	}
	consoleServers.mu.Lock()
	defer consoleServers.mu.Unlock()
	cs := consoleServers.byPort[port]
	if cs == nil {
		if cs, err = s.startConsoleServer(ctx, port, ds.Spec.Template.Spec); err != nil {
			return err
		}
		consoleServers.byPort[port] = cs
	}
	cs.refs++
	s.mu.Lock()
	s.console = cs
	s.mu.Unlock()
	context.AfterFunc(ctx, func() { cs.release(context.WithoutCancel(ctx), port) })
	return nil
}

// consoleServerPort is the --console-server-port of virt-handler's container.
func consoleServerPort(containers []corev1.Container) (int, error) {
	for _, c := range containers {
		for i, a := range c.Args {
			if a == testcluster.ConsoleServerPortFlag && i+1 < len(c.Args) {
				return strconv.Atoi(c.Args[i+1])
			}
		}
	}
	return 0, fmt.Errorf("sim: virt-handler DaemonSet without %s", testcluster.ConsoleServerPortFlag)
}

// startConsoleServer listens on 127.0.0.1:port with virt-handler's
// certificate and runs virt-handler's Pod on NodeName.
func (s *Simulator) startConsoleServer(ctx context.Context, port int, podSpec corev1.PodSpec) (*consoleServer, error) {
	tc, err := s.handlerTLS(ctx)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("sim: console server: %w", err)
	}
	cs := &consoleServer{
		kube: s.kube, dyn: s.dyn, log: s.log,
		active: map[connKey]chan struct{}{},
		guests: map[types.UID]*guest{},
		screen: map[types.UID]*vncscreen.Screen{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc(kubevirt.HandlerPathPattern(), cs.serveSubresource)
	mux.HandleFunc(screenshotPattern(), cs.serveScreenshot) // screenshot.go
	cs.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	go func() { _ = cs.srv.Serve(tls.NewListener(ln, tc)) }()
	if err := cs.runHandlerPod(ctx, podSpec); err != nil {
		_ = cs.srv.Close()
		return nil, err
	}
	s.log.InfoContext(ctx, "virt-handler console server", "address", ln.Addr().String())
	return cs, nil
}

// handlerTLS is virt-handler's server side: its certificate, and client
// certificates verified against KubeVirt's CA with virt-handler's client
// common name (KubeVirt's SetupTLSForVirtHandlerServer).
func (s *Simulator) handlerTLS(ctx context.Context) (*tls.Config, error) {
	cm, err := s.kube.CoreV1().ConfigMaps(testcluster.KubeVirtNamespace).Get(ctx, kubevirt.CAConfigMap, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("sim: KubeVirt CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(cm.Data[kubevirt.CABundleKey])) {
		return nil, fmt.Errorf("sim: ConfigMap %s has no CA certificate", kubevirt.CAConfigMap)
	}
	secret, err := s.kube.CoreV1().Secrets(testcluster.KubeVirtNamespace).Get(ctx, kubevirt.HandlerServerCertSecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("sim: virt-handler certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("sim: virt-handler certificate: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
		VerifyConnection: func(st tls.ConnectionState) error {
			if len(st.PeerCertificates) == 0 || st.PeerCertificates[0].Subject.CommonName != kubevirt.HandlerClientCommonName {
				return errors.New("client certificate's common name is not " + kubevirt.HandlerClientCommonName)
			}
			return nil
		},
	}, nil
}

// runHandlerPod creates virt-handler's Pod on NodeName (or takes over one
// left behind) and reports it running at 127.0.0.1, as the kubelet would.
func (cs *consoleServer) runHandlerPod(ctx context.Context, spec corev1.PodSpec) error {
	pods := cs.kube.CoreV1().Pods(testcluster.KubeVirtNamespace)
	spec.NodeName = NodeName
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: handlerPodName, Labels: map[string]string{kubevirt.AppLabel: kubevirt.HandlerAppName}},
		Spec:       spec,
	}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = pods.Get(ctx, handlerPodName, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("sim: virt-handler pod: %w", err)
	}
	now := metav1.Now()
	created.Status = corev1.PodStatus{
		Phase:      corev1.PodRunning,
		PodIP:      "127.0.0.1",
		PodIPs:     []corev1.PodIP{{IP: "127.0.0.1"}},
		HostIP:     "127.0.0.1",
		StartTime:  &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
	}
	if _, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: "kubelet"}); err != nil {
		return fmt.Errorf("sim: virt-handler pod status: %w", err)
	}
	return nil
}

// release drops one Simulator's use; the last one stops the server and
// deletes the Pod.
func (cs *consoleServer) release(ctx context.Context, port int) {
	consoleServers.mu.Lock()
	defer consoleServers.mu.Unlock()
	if cs.refs--; cs.refs > 0 {
		return
	}
	delete(consoleServers.byPort, port)
	_ = cs.srv.Close()
	cs.mu.Lock()
	for k, stop := range cs.active {
		close(stop)
		delete(cs.active, k)
	}
	cs.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := cs.kube.CoreV1().Pods(testcluster.KubeVirtNamespace).Delete(ctx, handlerPodName, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	if err != nil && !apierrors.IsNotFound(err) {
		cs.log.Warn("delete virt-handler pod", "error", err)
	}
}

// serveSubresource answers GET /v1/namespaces/{namespace}/virtualmachineinstances/{name}/{sub}.
func (cs *consoleServer) serveSubresource(w http.ResponseWriter, r *http.Request) {
	ns, name, sub := r.PathValue("namespace"), r.PathValue("name"), r.PathValue("sub")
	route, ok := routes[sub]
	if !ok {
		http.NotFound(w, r)
		return
	}
	vmi, status, err := cs.runningVMI(r, ns, name) // screenshot.go
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	up := websocket.Upgrader{
		Subprotocols: []string{kubevirt.PlainStreamProtocol},
		CheckOrigin:  func(*http.Request) bool { return true },
	}
	if !slices.Contains(websocket.Subprotocols(r), kubevirt.PlainStreamProtocol) {
		http.Error(w, "WebSocket subprotocol "+kubevirt.PlainStreamProtocol+" required", http.StatusBadRequest)
		return
	}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade answered the client
	}
	defer conn.Close()
	key := connKey{route: sub, uid: vmi.GetUID()}
	stop := cs.claim(key)
	defer cs.unclaim(key, stop)
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	go func() {
		select {
		case <-stop: // a newer connection, or the server's end
		case <-ctx.Done():
		}
		_ = conn.Close()
	}()
	err = route(cs, ctx, vmi, &wsStream{conn: conn})
	cs.log.Debug("console connection ended", "vmi", ns+"/"+name, "route", sub, "error", err)
}

// claim records a new connection for key, closing the one before it.
func (cs *consoleServer) claim(key connKey) chan struct{} {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if old, ok := cs.active[key]; ok {
		close(old)
	}
	stop := make(chan struct{})
	cs.active[key] = stop
	return stop
}

// unclaim forgets the connection, unless a newer one took its place.
func (cs *consoleServer) unclaim(key connKey, stop chan struct{}) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.active[key] == stop {
		delete(cs.active, key)
	}
}

// wsStream is a WebSocket as the byte stream both of KubeVirt's hops carry:
// each Write is one binary message; Read reads messages' payloads in order.
type wsStream struct {
	conn *websocket.Conn
	r    io.Reader
}

func (s *wsStream) Read(p []byte) (int, error) {
	for {
		if s.r == nil {
			_, r, err := s.conn.NextReader()
			if err != nil {
				return 0, err
			}
			s.r = r
		}
		n, err := s.r.Read(p)
		if errors.Is(err, io.EOF) {
			s.r = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

func (s *wsStream) Write(p []byte) (int, error) {
	if err := s.conn.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}
