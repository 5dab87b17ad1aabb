package virtapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Screens opens running VMIs' screens: KubeVirt's vnc subresource, a
// WebSocket through kube-apiserver to virt-api (and on to virt-handler)
// carrying RFB in binary messages. Safe for concurrent use.
type Screens struct {
	host      string // kube-apiserver's scheme://host
	tls       *tls.Config
	token     string // static bearer token, or
	tokenFile string // a token file read at each dial (rotated)
}

// NewScreens returns Screens dialing as cfg's identity (bearer token or
// client certificate).
func NewScreens(cfg *rest.Config) (*Screens, error) {
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("vnc subresource TLS: %w", err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		u, err = url.Parse("https://" + cfg.Host)
		if err != nil {
			return nil, fmt.Errorf("apiserver host %q: %w", cfg.Host, err)
		}
	}
	return &Screens{host: u.Scheme + "://" + u.Host, tls: tc, token: cfg.BearerToken, tokenFile: cfg.BearerTokenFile}, nil
}

// OpenScreen connects to the screen of the VMI of System key. The error of
// a refused connection carries the apiserver's (virt-api's) status and
// message: a VM with no running VMI is refused.
func (s *Screens) OpenScreen(ctx context.Context, key system.Key) (io.ReadWriteCloser, error) {
	header := http.Header{}
	token := s.token
	if s.tokenFile != "" {
		b, err := os.ReadFile(s.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("read token file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	d := websocket.Dialer{
		TLSClientConfig: s.tls,
		Subprotocols:    []string{kubevirt.PlainStreamProtocol},
		ReadBufferSize:  32 << 10, WriteBufferSize: 4 << 10,
	}
	u := strings.Replace(s.host, "http", "ws", 1) + kubevirt.VMISubresourcePath(key.Namespace, key.Name, kubevirt.VNCSubresource)
	ws, resp, err := d.DialContext(ctx, u, header)
	if resp != nil && resp.Body != nil {
		defer resp.Body.Close()
	}
	if err != nil {
		if resp != nil {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			return nil, fmt.Errorf("vnc of %s: %s: %s", key, resp.Status, strings.TrimSpace(string(msg)))
		}
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
