package media

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Service implements the virtual-media verbs on top of [apply.Writer].
type Service struct {
	w    apply.Writer
	kube kubernetes.Interface
	// ejectors delete each import method's objects on Eject.
	ejectors []importer.Ejector
	now      func() time.Time
	bundle   CABundle
	policy   download.AddrPolicy
	resolver download.HostResolver
	// trustCache serves Trust's reads; nil reads live.
	trustCache *TrustCache
	// trustKey signs and verifies the trust ConfigMaps (trustmac.go).
	trustKey objmac.Key
	// imageCache records each insert's cache key (cache.go).
	imageCache bool
	// cacheSecret is what the cache keys are an HMAC under (cachekey.go).
	cacheSecret []byte
}

// NewService returns a Service writing VMs through w and deleting import
// pods and PVCs through kube. It logs with the logger in each call's
// context.
func NewService(w apply.Writer, kube kubernetes.Interface) *Service {
	return &Service{w: w, kube: kube, now: time.Now, ejectors: newEjectors(kube)}
}

// SetAddrPolicy makes Insert refuse image URLs whose literal IP p refuses
// (a 400 before anything is recorded); the zero policy is the default.
// The import itself checks every connection under [Options.AddrPolicy].
func (s *Service) SetAddrPolicy(p download.AddrPolicy) { s.policy = p }

// SetHostResolver makes Insert also resolve the image URL's host name with
// r and refuse it (the same 400 as a literal refused IP, before anything is
// created) if it does not resolve or any of its addresses is refused:
// [AddrPolicy.ValidateResolved]. For an import method that does not check
// the addresses it dials (CDI's importer); nil: names are left to the
// import pod's connect-time check.
func (s *Service) SetHostResolver(r download.HostResolver) { s.resolver = r }

// validateURL is the insert's check of image for a VM of namespace:
// [AddrPolicy.ValidateURL], and [AddrPolicy.ValidateResolved] with a
// resolver.
func (s *Service) validateURL(ctx context.Context, image, namespace string) error {
	if s.resolver == nil {
		return s.policy.ValidateURL(image)
	}
	return s.policy.ValidateResolved(ctx, s.resolver, image, namespace)
}

// Insert accepts req's image for the slot. An https image whose server
// presents a certificate the import would not trust is refused first
// ([download.AddrPolicy.CheckTLS]: an [*download.InvalidURLError], nothing
// recorded). It records the slot as Pending
// with a fresh InsertID and its claim name before returning, so a power-on
// arriving right after is deferred. The import itself is the
// [Reconciler]'s job; the CD-ROM disk and its volume appear (together)
// when the slot turns Ready. What the import needs besides the URL (the
// slot's trust and req's credentials) goes into the insert's import
// Secret, created before the slot is recorded.
//
// Inserting the image already being imported returns the in-flight slot;
// another image while the slot is busy is a [*BusyError]. Inserting over a
// Ready or Failed slot, even the same URL, imports afresh.
func (s *Service) Insert(ctx context.Context, key system.Key, slot string, req system.MediaInsert) (system.MediaSlot, error) {
	image := req.Image
	if !ValidSlot(slot) {
		return system.MediaSlot{}, fmt.Errorf("insert into %s slot %q: %w", key, slot, ErrInvalidSlot)
	}
	if err := s.validateURL(ctx, image, key.Namespace); err != nil {
		return system.MediaSlot{}, fmt.Errorf("insert into %s slot %s: %w", key, slot, err)
	}
	vm, err := s.w.Read(ctx, key)
	if err != nil {
		return system.MediaSlot{}, fmt.Errorf("insert %q into %s slot %s: %w", image, key, slot, err)
	}
	if vm.Slots[slot].Phase.Busy() {
		// The cache may be behind an import that has finished since:
		// busy or not is decided on a live read.
		cur, err := s.liveSlot(ctx, key, slot)
		if err != nil {
			return system.MediaSlot{}, fmt.Errorf("insert %q into %s slot %s: %w", image, key, slot, err)
		}
		if cur.Phase.Busy() {
			return inFlight(cur, slot, image)
		}
	}
	data, fresh, err := s.importData(ctx, key, slot, req)
	if err != nil {
		return system.MediaSlot{}, fmt.Errorf("insert %q into %s slot %s: %w", image, key, slot, err)
	}
	if !fresh.Insecure {
		// The trust the import will have: refuse now what it would fail on.
		if err := s.policy.CheckTLS(ctx, image, data[download.CAKey]); err != nil {
			return system.MediaSlot{}, fmt.Errorf("insert into %s slot %s: %w", key, slot, err)
		}
	}
	fresh.Slot, fresh.Image, fresh.Phase, fresh.Reason = slot, image, system.MediaPending, "import accepted"
	fresh.InsertID, fresh.Since, fresh.ClaimName = NewInsertID(), s.now().UTC(), ClaimName(key, slot)
	fresh.ActionURI = req.ActionURI
	if s.imageCache {
		if len(s.cacheSecret) == 0 {
			return system.MediaSlot{}, fmt.Errorf("insert %q into %s slot %s: %w", image, key, slot, errNoCacheKey)
		}
		fresh.CacheKey = cacheKeyOf(s.cacheSecret, image, fresh, data)
	}
	if data != nil {
		fresh.ImportSecret = ImportSecretName(fresh.ClaimName, fresh.InsertID)
		if err := s.createImportSecret(ctx, vm, fresh, data); err != nil {
			return system.MediaSlot{}, fmt.Errorf("insert %q into %s slot %s: %w", image, key, slot, err)
		}
	}
	result, err := s.record(ctx, key, fresh)
	if result.InsertID != fresh.InsertID {
		// Not recorded (an error, or another insert won): the Secret is nobody's.
		if derr := deleteImportSecret(ctx, s.kube, owner{Key: key, UID: vm.Object.GetUID()}, fresh); derr != nil {
			err = errors.Join(err, derr)
		}
	}
	if err != nil {
		return system.MediaSlot{}, fmt.Errorf("insert %q into %s slot %s: %w", image, key, slot, err)
	}
	logctx.From(ctx).Info("media inserted", "vm", key.String(), "slot", slot,
		"image", image, "insertID", result.InsertID, "phase", result.Phase,
		"credentials", result.Credentials, "verifyCertificate", !result.Insecure)
	return result, nil
}

// liveSlot is the slot as the apiserver has it now: a change that writes
// nothing is confirmed on a live read ([apply.Writer.Media]), and this one
// only looks.
func (s *Service) liveSlot(ctx context.Context, key system.Key, slot string) (system.MediaSlot, error) {
	var cur system.MediaSlot
	_, err := s.w.Media(ctx, key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		cur = slots[slot]
		return apply.ErrNoChange
	})
	return cur, err
}

// inFlight answers an insert of image into slot while its import cur is
// busy: cur itself for the same image, a [*BusyError] for another.
func inFlight(cur system.MediaSlot, slot, image string) (system.MediaSlot, error) {
	if cur.Image != image {
		return system.MediaSlot{}, &BusyError{Slot: slot, Image: cur.Image, Requested: image}
	}
	return cur, nil
}

// record writes fresh into its slot unless the slot turned busy meanwhile:
// the in-flight slot (same image) or a [*BusyError] then.
func (s *Service) record(ctx context.Context, key system.Key, fresh system.MediaSlot) (system.MediaSlot, error) {
	var result system.MediaSlot
	vm, err := s.w.Media(ctx, key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		cur := slots[fresh.Slot]
		if cur.Phase.Busy() {
			var err error
			if result, err = inFlight(cur, fresh.Slot, fresh.Image); err != nil {
				return err
			}
			return apply.ErrNoChange
		}
		slots[fresh.Slot] = fresh
		result = fresh
		return nil
	})
	if err != nil && !errors.Is(err, apply.ErrNoChange) {
		return system.MediaSlot{}, err
	}
	if vm != nil {
		if got, ok := vm.Slots[fresh.Slot]; ok && got.InsertID == result.InsertID {
			result = got
		}
	}
	return result, nil
}

// Eject empties the slot: one apply removes the slot, its CD-ROM disk and
// its volume together (apply/ releases boot fields on the disk first); then
// each import method deletes its objects of the slot (the import pods, the
// CDI method's check pods; a CDI DataVolume, and the PVC it owns, are the
// [Reconciler]'s, which sees the slot gone), and the import Secret and
// ConfigMap and the PVC the bridge made for this VM are deleted. Ejecting
// an empty slot succeeds and still cleans up leftovers of an interrupted
// eject.
func (s *Service) Eject(ctx context.Context, key system.Key, slot string) error {
	if !ValidSlot(slot) {
		return fmt.Errorf("eject %s slot %q: %w", key, slot, ErrInvalidSlot)
	}
	claim := ClaimName(key, slot)
	var ejected system.MediaSlot
	o := owner{Key: key}
	_, err := s.w.Media(ctx, key, func(vm *apply.VM, slots map[string]system.MediaSlot) error {
		o.UID = vm.Object.GetUID()
		cur, ok := slots[slot]
		if !ok {
			return apply.ErrNoChange
		}
		if cur.ClaimName != "" {
			claim = cur.ClaimName
		}
		ejected = cur
		delete(slots, slot)
		return nil
	})
	if err != nil && !errors.Is(err, apply.ErrNoChange) {
		return fmt.Errorf("eject %s slot %s: %w", key, slot, err)
	}
	// Only what the bridge made for this VM (label and ownerReference to
	// its UID) is deleted, never an object that merely has the name. Each
	// import method deletes its own objects.
	for _, e := range s.ejectors {
		if err := e.Eject(ctx, o, slot); err != nil {
			return fmt.Errorf("eject %s slot %s: %w", key, slot, err)
		}
	}
	if err := deleteImportSecret(ctx, s.kube, o, ejected); err != nil {
		return fmt.Errorf("eject %s slot %s: %w", key, slot, err)
	}
	if err := importer.DeleteOwnedClaim(ctx, s.kube, o, claim); err != nil {
		return fmt.Errorf("eject %s slot %s: %w", key, slot, err)
	}
	logctx.From(ctx).Info("media ejected", "vm", key.String(), "slot", slot)
	return nil
}
