package media

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// DefaultSlot is the slot id of the CD-ROM every system offers.
const DefaultSlot = "cd0"

// USBSlot is the slot id of the USB stick every system offers (Ironic's
// config_via_removable puts its configuration on it).
const USBSlot = "usb0"

// DefaultSlots are the virtual-media slots every system offers.
var DefaultSlots = []string{DefaultSlot, USBSlot}

const (
	// maxClaimName leaves room in 63 characters for "-" + an InsertID.
	maxClaimName = 63 - 1 - insertIDLength
	// insertIDLength is the length of an InsertID (hex).
	insertIDLength = 16
	hashLength     = 10
)

var slotRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,7}$`)

// ValidSlot reports whether slot is a well-formed slot id: a lowercase letter
// then up to 7 lowercase letters or digits, e.g. "cd0".
func ValidSlot(slot string) bool { return slotRE.MatchString(slot) }

// ClaimName is the deterministic name of the PVC holding the image of a
// VM's slot: "<vm>-media-<slot>" when that is a DNS-1123 label short enough
// to take an InsertID suffix, else a sanitized, truncated prefix plus a hash
// of namespace, name and slot. It is always a valid DNS-1123 label of at
// most 46 characters.
func ClaimName(key system.Key, slot string) string {
	plain := key.Name + "-media-" + slot
	if len(plain) <= maxClaimName && len(validation.IsDNS1123Label(plain)) == 0 {
		return plain
	}
	sum := sha256.Sum256([]byte(key.Namespace + "/" + key.Name + "/" + slot))
	suffix := "-media-" + slot + "-" + hex.EncodeToString(sum[:])[:hashLength]
	prefix := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(key.Name))
	if n := maxClaimName - len(suffix); len(prefix) > n {
		prefix = prefix[:n]
	}
	prefix = strings.Trim(prefix, "-")
	if prefix == "" {
		prefix = "vm"
	}
	return prefix + suffix
}

// NewInsertID returns a fresh InsertID: 16 lowercase hex characters.
func NewInsertID() string {
	var b [insertIDLength / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails on Linux
	}
	return hex.EncodeToString(b[:])
}
