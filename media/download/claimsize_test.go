package download

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestClaimSize(t *testing.T) {
	def := resource.MustParse("8Gi")
	tests := []struct {
		name string
		n    int64
		want string
	}{
		{"unknown", -1, "8Gi"},
		{"zero", 0, "8Gi"},
		{"tiny gets the minimum", 1000, "64Mi"},
		{"100Mi plus 10%", 100 * mi, "110Mi"},
		{"rounded up to Mi", 1000 * mi, "1100Mi"},
		{"odd bytes", 1<<30 + 1, "1127Mi"}, // 1Gi+1 +10% = 1181116007.4 bytes -> 1127Mi
		// Sizes past the limit count as the limit: no int64 wrap-around
		// (MaxInt64 once became 64Mi).
		{"1Pi", 1 << 50, "1181116007Mi"},
		{"past the limit", 1<<50 + 1, "1181116007Mi"},
		{"MaxInt64", math.MaxInt64, "1181116007Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ClaimSize(tt.n, def)
			want := resource.MustParse(tt.want)
			if got.Cmp(want) != 0 {
				t.Fatalf("ClaimSize(%d) = %s, want %s", tt.n, got.String(), tt.want)
			}
			if n := min(tt.n, MaxImageSizeLimit); n > 0 && got.Value() < n+n/10 {
				t.Fatalf("ClaimSize(%d) = %d, below size+10%%", tt.n, got.Value())
			}
		})
	}
}

func TestClaimRoom(t *testing.T) {
	tests := []struct {
		claim string
		want  int64
	}{
		{"1Mi", 0},          // smaller than any PVC the bridge makes
		{"64Mi", 61008058},  // 61008058 + 6100806 = 64Mi exactly
		{"8Gi", 7809031447}, // the default PVC: 7809031447 + 780903145 = 8Gi
		{"110Mi", 110 * mi / 11 * 10},
		{"1181116007Mi", 1 << 50}, // ClaimSize(1Pi) holds 1Pi
	}
	for _, tt := range tests {
		claim := resource.MustParse(tt.claim)
		if got := ClaimRoom(claim); got != tt.want {
			t.Errorf("ClaimRoom(%s) = %d, want %d", tt.claim, got, tt.want)
		}
	}
}

// FuzzClaimSize: for every size, the PVC is at least size+10%, a whole
// number of Mi, at least 64Mi, never wraps, and ClaimRoom is its exact
// inverse: the PVC holds the image, and an image one byte larger than what
// a PVC holds gets a strictly larger PVC (resizing always makes progress).
func FuzzClaimSize(f *testing.F) {
	for _, n := range []int64{1, 1000, 64 * mi, 1<<30 + 1, 1 << 50, 1<<50 + 1, math.MaxInt64, -5} {
		f.Add(n)
	}
	def := resource.MustParse("8Gi")
	f.Fuzz(func(t *testing.T, n int64) {
		got := ClaimSize(n, def)
		if n <= 0 {
			if got.Cmp(def) != 0 {
				t.Fatalf("ClaimSize(%d) = %s, want the default", n, got.String())
			}
			return
		}
		c := got.Value()
		s := min(n, MaxImageSizeLimit)
		if c < s+s/10 || c%mi != 0 || c < minClaimBytes {
			t.Fatalf("ClaimSize(%d) = %d", n, c)
		}
		room := ClaimRoom(got)
		if room < s {
			t.Fatalf("ClaimRoom(ClaimSize(%d) = %d) = %d: the PVC does not hold the image", n, c, room)
		}
		if room < MaxImageSizeLimit {
			if bigger := ClaimSize(room+1, def); bigger.Cmp(got) <= 0 {
				t.Fatalf("ClaimSize(%d) = %s is not larger than the PVC %d holding %d", room+1, bigger.String(), c, room)
			}
		}
	})
}

func TestParseImageSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"64Gi", 64 << 30, true},
		{"1Pi", 1 << 50, true},
		{"1500M", 1500e6, true},
		{"0.5", 0, false},
		{"0", 0, false},
		{"-1Gi", 0, false},
		{"2Pi", 0, false},
		{"9999999999999999999999", 0, false},
		{"lots", 0, false},
	} {
		got, err := ParseImageSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseImageSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
