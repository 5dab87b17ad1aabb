package media

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// waitPoll is how soon a slot waiting for something the watches may not
// report (a PVC finishing deletion elsewhere) is looked at again.
const waitPoll = 2 * time.Second

// reconcile brings the import objects of one VM in line with its slots. It
// returns how soon the VM wants another look (0: only on the next event).
func (r *Reconciler) reconcile(ctx context.Context, key system.Key) (time.Duration, error) {
	vm, err := r.opts.Writer.Read(ctx, key)
	if apierrors.IsNotFound(err) {
		return 0, nil // pods and PVCs are owned by the VM: the GC collects them
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", key, err)
	}
	var after time.Duration
	soon := func(d time.Duration) {
		if d > 0 && (after == 0 || d < after) {
			after = d
		}
	}
	errs := []error{r.heal(ctx, vm)}
	o := owner{Key: key, UID: vm.Object.GetUID()}
	for _, slot := range vm.Slots {
		d, err := r.reconcileSlot(ctx, vm, o, slot)
		soon(d)
		errs = append(errs, err)
	}
	d, err := r.collect(ctx, vm)
	soon(d)
	errs = append(errs, err)
	return after, errors.Join(errs...)
}

// reconcileSlot advances one slot's import through its import method.
func (r *Reconciler) reconcileSlot(ctx context.Context, vm *apply.VM, o owner, slot system.MediaSlot) (time.Duration, error) {
	key := vm.Key
	t := importer.Target{Owner: o, Slot: slot}
	logctx.From(ctx).DebugContext(ctx, "reconcile slot", "vm", key.String(), "slot", slot.Slot, "phase", slot.Phase, "insertID", slot.InsertID, "method", slot.Method)
	if !slot.Phase.Busy() {
		var errs []error
		for _, imp := range r.importers {
			errs = append(errs, imp.Settle(ctx, t))
		}
		if slot.Phase == system.MediaFailed {
			errs = append(errs, r.releaseFailed(ctx, vm, o, slot))
		}
		return 0, errors.Join(errs...)
	}
	if slot.InsertID == "" || slot.ClaimName == "" {
		return 0, fmt.Errorf("slot %s of %s is %s without InsertID or ClaimName", slot.Slot, key, slot.Phase)
	}
	imp, why := r.importerFor(slot)
	if imp == nil {
		return 0, r.refuse(ctx, o, slot, why)
	}

	remaining := time.Until(slot.Since.Add(r.opts.ImportTimeout))
	if remaining <= 0 {
		if err := deleteImportSecret(ctx, r.opts.Kube, o, slot); err != nil {
			return 0, err
		}
		ok, err := r.finish(ctx, key, slot, system.MediaFailed, "import timed out", 0)
		if ok {
			r.c.timedOut.Add(1)
			if r.opts.ObserveImport != nil {
				r.opts.ObserveImport("timed_out", time.Since(slot.Since))
			}
		}
		if err == nil {
			err = imp.Finish(ctx, t)
		}
		return 0, err
	}

	st, err := imp.Observe(ctx, t)
	if foreign := (*ForeignClaimError)(nil); errors.As(err, &foreign) {
		return 0, r.refuse(ctx, o, slot, foreign.Error())
	}
	if err != nil {
		return 0, err
	}
	switch st.State {
	case importer.Waiting:
		return min(remaining, waitPoll), nil
	case importer.Running:
		if st.Recheck > 0 {
			remaining = min(remaining, st.Recheck)
		}
		return remaining, r.running(ctx, key, slot, imp, st)
	case importer.NeedsRoom:
		return min(remaining, waitPoll), r.resize(ctx, t, imp, st.Bytes)
	case importer.Succeeded, importer.Failed:
		return 0, r.ended(ctx, t, imp, st)
	}
	// Nothing of this insert exists yet.
	if slot.SizeBytes > r.opts.MaxImageSize {
		return 0, r.refuse(ctx, o, slot, (&download.TooLargeError{Bytes: slot.SizeBytes, Announced: true, Max: r.opts.MaxImageSize}).Error())
	}
	// The slot as cached may be stale (ejected or re-inserted a moment
	// ago): record the start first. The apply is preconditioned on what was
	// read, so it only lands if the slot still holds this insert; only then
	// is the import started. The edit always changes the slot, so the
	// apply (and its precondition) always happens.
	started, err := r.transition(ctx, key, slot, func(s *system.MediaSlot) {
		now := time.Now().UTC()
		s.Method = imp.Method()
		if s.Phase == system.MediaPending {
			s.Phase, s.Since = system.MediaImporting, now
			s.Reason = "importing into PVC " + slot.ClaimName
		} else {
			// Always a new value: the apply must happen to prove the read fresh.
			s.Reason = "import re-started at " + now.Format(time.RFC3339Nano)
		}
	})
	if err != nil || !started {
		logctx.From(ctx).DebugContext(ctx, "slot moved on before the import started", "vm", key.String(), "slot", slot.Slot, "insertID", slot.InsertID, "err", err)
		return 0, err
	}
	t.Slot.Method = imp.Method()
	err = imp.Start(ctx, t, st)
	if foreign := (*ForeignClaimError)(nil); errors.As(err, &foreign) {
		return 0, r.refuse(ctx, o, slot, foreign.Error())
	}
	return remaining, err
}

// running records an import under way: Importing (an earlier run started
// it but did not record it) and its progress.
func (r *Reconciler) running(ctx context.Context, key system.Key, slot system.MediaSlot, imp Importer, st importer.Status) error {
	if slot.Phase != system.MediaPending && slot.Method != "" && st.Percent <= slot.Percent {
		return nil
	}
	_, err := r.transition(ctx, key, slot, func(s *system.MediaSlot) {
		s.Method = imp.Method()
		if s.Phase == system.MediaPending {
			s.Phase = system.MediaImporting
			s.Reason = "importing into PVC " + slot.ClaimName
			s.Since = time.Now().UTC()
		}
		if st.Percent > s.Percent {
			s.Percent = st.Percent
		}
	})
	return err
}

// ended records an import that succeeded or failed, then lets its method
// delete what it no longer needs. The credentials were for the download
// only: the import Secret is gone before the import is recorded as over.
func (r *Reconciler) ended(ctx context.Context, t importer.Target, imp Importer, st importer.Status) error {
	if err := deleteImportSecret(ctx, r.opts.Kube, t.Owner, t.Slot); err != nil {
		return err
	}
	phase, reason, size, result := system.MediaReady, "imported", t.Slot.SizeBytes, "succeeded"
	if st.Bytes > 0 {
		size = st.Bytes
	}
	if st.State == importer.Failed {
		phase, reason, size, result = system.MediaFailed, st.Reason, 0, "failed"
	}
	ok, err := r.finish(ctx, t.Owner.Key, t.Slot, phase, reason, size)
	if err != nil {
		return err
	}
	if ok { // not when another replica recorded it first
		if phase == system.MediaReady {
			r.c.ready.Add(1)
		} else {
			r.c.failed.Add(1)
		}
		if r.opts.ObserveImport != nil && !st.Started.IsZero() {
			r.opts.ObserveImport(result, time.Since(st.Started))
		}
	}
	return imp.Finish(ctx, t)
}

// resize acts on an import that found the image larger than its PVC: the
// image's size is recorded on the slot, the import's objects deleted, and
// the next round replaces the PVC with one of ClaimSize(need), strictly
// larger than the one it had (see [ClaimRoom]), and starts again. The
// import Secret stays: the next import downloads again.
func (r *Reconciler) resize(ctx context.Context, t importer.Target, imp Importer, need int64) error {
	key, slot := t.Owner.Key, t.Slot
	if need > r.opts.MaxImageSize {
		if err := r.refuse(ctx, t.Owner, slot, (&download.TooLargeError{Bytes: need, Announced: true, Max: r.opts.MaxImageSize}).Error()); err != nil {
			return err
		}
		return imp.Finish(ctx, t)
	}
	if need > slot.SizeBytes { // else: this report is already recorded
		_, err := r.transition(ctx, key, slot, func(s *system.MediaSlot) {
			s.SizeBytes = need
			s.Reason = fmt.Sprintf("image is %d bytes (%s); re-creating PVC %s for it", need, download.FormatBytes(need), slot.ClaimName)
		})
		if err != nil {
			return err
		}
		logctx.From(ctx).InfoContext(ctx, "image larger than its PVC", "vm", key.String(), "slot", slot.Slot, "bytes", need, "pvc", slot.ClaimName)
	}
	return imp.Finish(ctx, t)
}

// refuse fails the slot's import before (or instead of) a download: its
// import Secret goes, then the slot is recorded Failed with reason.
func (r *Reconciler) refuse(ctx context.Context, o owner, slot system.MediaSlot, reason string) error {
	if err := deleteImportSecret(ctx, r.opts.Kube, o, slot); err != nil {
		return err
	}
	_, err := r.finish(ctx, o.Key, slot, system.MediaFailed, reason, 0)
	return err
}

// finish records a final phase for the slot's current insert.
func (r *Reconciler) finish(ctx context.Context, key system.Key, slot system.MediaSlot, phase system.MediaPhase, reason string, size int64) (bool, error) {
	ok, err := r.transition(ctx, key, slot, func(s *system.MediaSlot) {
		s.Phase = phase
		s.Reason = reason
		s.Since = time.Now().UTC()
		s.ImportSecret = "" // deleted before
		s.Percent = 0
		if size > 0 {
			s.SizeBytes = size
		}
	})
	if ok {
		lvl := "import finished"
		logctx.From(ctx).InfoContext(ctx, lvl, "vm", key.String(), "slot", slot.Slot, "insertID", slot.InsertID, "phase", phase, "reason", reason)
	}
	return ok, err
}

// transition applies edit to the slot if it still holds the same busy insert
// on a fresh read; false when the slot moved on (ejected, re-inserted,
// already finished by another replica).
func (r *Reconciler) transition(ctx context.Context, key system.Key, slot system.MediaSlot, edit func(*system.MediaSlot)) (bool, error) {
	applied := false
	_, err := r.opts.Writer.Media(ctx, key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		applied = false
		cur, ok := slots[slot.Slot]
		if !ok || cur.InsertID != slot.InsertID || !cur.Phase.Busy() {
			return apply.ErrNoChange
		}
		before := cur
		edit(&cur)
		if cur == before {
			return apply.ErrNoChange
		}
		slots[slot.Slot] = cur
		applied = true
		return nil
	})
	if err != nil && !errors.Is(err, apply.ErrNoChange) {
		return false, fmt.Errorf("record slot %s of %s: %w", slot.Slot, key, err)
	}
	return applied && err == nil, nil
}
