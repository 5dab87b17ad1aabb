package demo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// ImageServer serves sample ISO images over plain HTTP on loopback, the way
// Ironic's conductor serves boot ISOs to BMCs.
type ImageServer struct {
	URL    string // base URL, e.g. http://127.0.0.1:40123
	SHA256 map[string]string
	srv    *http.Server
}

// StartImageServer serves /images/<name> for each name with size bytes of
// deterministic content.
func StartImageServer(names []string, size int) (*ImageServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("image server listen: %w", err)
	}
	mux := http.NewServeMux()
	s := &ImageServer{URL: "http://" + ln.Addr().String(), SHA256: map[string]string{}}
	for i, name := range names {
		data := make([]byte, size)
		r := rand.New(rand.NewPCG(uint64(i+1), 42))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		sum := sha256.Sum256(data)
		s.SHA256[name] = hex.EncodeToString(sum[:])
		mux.HandleFunc("/images/"+name, func(w http.ResponseWriter, r *http.Request) {
			http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
		})
	}
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *ImageServer) Close() error { return s.srv.Close() }
