package download

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPipeHash: the sum of what was written, whatever the sizes of the
// writes (none, smaller than a buffer, several buffers at once).
func TestPipeHash(t *testing.T) {
	for _, writes := range [][]int{nil, {1}, {copyBufferSize + 1}, {3, copyBufferSize*pipeHashBuffers*2 + 7, 0, 5}} {
		t.Run(fmt.Sprint(writes), func(t *testing.T) {
			var all []byte
			p := newPipeHash(sha256.New())
			for i, n := range writes {
				b := bytes.Repeat([]byte{byte('a' + i)}, n)
				if got, err := p.Write(b); got != n || err != nil {
					t.Fatalf("Write(%d bytes) = %d, %v", n, got, err)
				}
				all = append(all, b...)
			}
			want := sha256.Sum256(all)
			if diff := cmp.Diff(hex.EncodeToString(want[:]), hex.EncodeToString(p.Sum())); diff != "" {
				t.Errorf("sum (-want +got):\n%s", diff)
			}
			p.Close() // again: nothing
		})
	}
}
