package virtapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/rest"
	clientws "k8s.io/client-go/transport/websocket"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Screens opens running VMIs' screens: KubeVirt's vnc subresource, a
// WebSocket through kube-apiserver to virt-api (and on to virt-handler)
// carrying RFB in binary messages, dialed with client-go's WebSocket
// transport as the bridge's rest.Config (token, CA, exec plugins). Safe for
// concurrent use.
type Screens struct {
	cfg *rest.Config
}

// NewScreens returns Screens dialing as cfg's identity (cfg is copied).
func NewScreens(cfg *rest.Config) (*Screens, error) {
	if _, err := url.Parse(cfg.Host); err != nil {
		return nil, fmt.Errorf("vnc subresource: apiserver address %q: %w", cfg.Host, err)
	}
	return &Screens{cfg: rest.CopyConfig(cfg)}, nil
}

// OpenScreen connects to the screen of the VMI of System key. A refused
// connection's error wraps the apiserver's (or virt-api's) Status: a VM
// with no running VMI is refused, a missing grant is Forbidden.
func (s *Screens) OpenScreen(ctx context.Context, key system.Key) (io.ReadWriteCloser, error) {
	rt, holder, err := clientws.RoundTripperFor(s.cfg)
	if err != nil {
		return nil, fmt.Errorf("vnc of %s: client: %w", key, err)
	}
	u, err := url.Parse(s.cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("vnc of %s: apiserver address: %w", key, err)
	}
	u.Path = kubevirt.VMISubresourcePath(key.Namespace, key.Name, kubevirt.VNCSubresource)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("vnc of %s: request: %w", key, err)
	}
	ws, err := clientws.Negotiate(rt, holder, req, kubevirt.PlainStreamProtocol)
	if u := (*httpstream.UpgradeFailureError)(nil); errors.As(err, &u) {
		err = u.Cause // the apiserver's or virt-api's Status, if it sent one
	}
	if err != nil {
		return nil, fmt.Errorf("vnc of %s: %w", key, err)
	}
	return &stream{ws: ws}, nil
}

// stream is a WebSocket as the byte stream its binary messages carry.
type stream struct {
	ws *websocket.Conn
	r  io.Reader
	wm sync.Mutex
}

func (s *stream) Read(p []byte) (int, error) {
	for {
		if s.r == nil {
			_, r, err := s.ws.NextReader()
			if err != nil {
				return 0, err
			}
			s.r = r
		}
		n, err := s.r.Read(p)
		if err == io.EOF {
			s.r = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

func (s *stream) Write(p []byte) (int, error) {
	s.wm.Lock()
	defer s.wm.Unlock()
	if err := s.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *stream) Close() error { return s.ws.Close() }
