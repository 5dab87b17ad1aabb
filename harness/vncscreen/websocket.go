package vncscreen

import (
	"io"
	"sync"

	"github.com/gorilla/websocket"
)

// WebSocketStream is a WebSocket as the byte stream it carries in binary
// messages, as virt-handler, virt-api and the bridge relay RFB: Serve and
// Dial run over it.
type WebSocketStream struct {
	ws *websocket.Conn
	r  io.Reader // the current message's rest
	wm sync.Mutex
}

// NewWebSocketStream returns ws as a byte stream.
func NewWebSocketStream(ws *websocket.Conn) *WebSocketStream { return &WebSocketStream{ws: ws} }

// Read reads the bytes of the next binary messages.
func (s *WebSocketStream) Read(p []byte) (int, error) {
	for {
		if s.r != nil {
			n, err := s.r.Read(p)
			if err == io.EOF {
				s.r = nil
				if n > 0 {
					return n, nil
				}
				continue
			}
			return n, err
		}
		_, r, err := s.ws.NextReader()
		if err != nil {
			return 0, err
		}
		s.r = r
	}
}

// Write sends p as one binary message.
func (s *WebSocketStream) Write(p []byte) (int, error) {
	s.wm.Lock()
	defer s.wm.Unlock()
	if err := s.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close closes the WebSocket's connection.
func (s *WebSocketStream) Close() error { return s.ws.Close() }
