package service

import (
	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/media"
)

// reconcileWorkers work each reconciler's queue.
const reconcileWorkers = 2

// A reconciler is one controller engine, which lives across leadership
// terms (so do its metrics), and its part of the manager's Leader group,
// which runs one term of it (media's is built afresh each term:
// [manager.EachTerm]).
type reconciler struct {
	ctrl *controller.Controller
	part manager.Part
}

// reconcilers are every reconciler of the bridge. Adding one is one entry
// in newConcerns' list: its term then starts and stops with the others
// (the manager's Leader group) and its engine's counters are scraped.
type reconcilers struct {
	list       []reconciler
	mediaCount *media.Counters // media's counters, over every term
}

// addTo adds every reconciler's part to mgr's Leader group.
func (r reconcilers) addTo(mgr *manager.Manager) error {
	for _, rec := range r.list {
		if err := mgr.Add(rec.part, manager.Leader); err != nil {
			return err
		}
	}
	return nil
}

// mediaStats are the media counters of every term so far.
func (r reconcilers) mediaStats() media.Stats { return r.mediaCount.Stats() }

// controllers are the engines' counters, cumulative over the terms.
func (r reconcilers) controllers() []controller.Stats {
	out := make([]controller.Stats, len(r.list))
	for i, rec := range r.list {
		out[i] = rec.ctrl.Stats()
	}
	return out
}
