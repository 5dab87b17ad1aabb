package service

import (
	"fmt"
	"net"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/backend"
	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventlog"
	"github.com/redfish-bridge/redfish-bridge/eventstream"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/metrics"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/protocols"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/thumbnail"
	"github.com/redfish-bridge/redfish-bridge/vncconsole"
)

// concerns are what the Redfish backend and the long-running parts are
// built on: the clients, the synced caches and the configuration they came
// from, the SSA writer, the media and power verbs, and their reconcilers
// (Leader parts).
type concerns struct {
	clients clients
	caches  *caches
	cfg     Config

	writer *apply.Client
	// console opens VMs' serial consoles for the console front ends.
	console *console.Opener
	// backend is the verbs the front ends share (Redfish, IPMI).
	backend *backend.Backend
	media   *media.Service
	power   *power.Service
	recs    reconcilers

	// bus carries this replica's events (package eventsource publishes
	// them) to what reads them here: the LogService, SSE, delivery.
	bus *event.Bus
	// log is each System's event log, read by the Redfish LogServices.
	log *eventlog.Log
	// events keeps the EventService's subscriptions in eventStore.
	eventStore *eventsub.Store
	events     *backend.Events
	// graphical is the graphical console (page, WebSocket, tokens).
	graphical *vncconsole.Console
	// protocols shows and switches each System's IPMI and SSH.
	protocols *protocols.Table
	// streams are this replica's Server-Sent Event streams, from bus.
	streams *eventstream.Streams
}

// newConcerns builds the concerns on the synced caches c and hands their
// counters to m.
func newConcerns(cl clients, c *caches, cfg Config, m *metrics.Metrics) (*concerns, error) {
	var _ apply.DecisionCache = c.inv // ValidateLegacy decided once per VM version, kept beside its managedFields
	writer := apply.New(cl.dyn, c.inv, c.mode, apply.Options{})
	mediaSvc := media.NewService(writer, cl.kube)
	mediaSvc.SetTrustCache(c.trust)
	mediaSvc.SetObjectSecret(c.key)
	mediaSvc.SetAddrPolicy(cfg.ImageAddrPolicy)
	mediaSvc.SetImageCache(cfg.ImageCache)
	mediaSvc.SetImageCacheKey(cfg.ImageCacheKey)
	if cfg.ImportMethod != media.ImportMethodPod {
		// CDI's importer may import: it checks no address it dials, so an
		// image URL's host name is resolved and checked at insert.
		mediaSvc.SetHostResolver(net.DefaultResolver)
	}
	if cfg.ImageCAConfigMap != "" {
		mediaSvc.SetCABundle(media.CABundle{Namespace: cfg.Namespace, ConfigMap: cfg.ImageCAConfigMap, Key: cfg.ImageCAKey})
	}
	mediaCtrl, mediaCount := controller.New("media", controller.Options{Workers: reconcileWorkers}), &media.Counters{}
	mediaOpts := media.Options{
		Controller: mediaCtrl, Counters: mediaCount,
		Writer: writer, Kube: cl.kube, Dynamic: cl.dyn, Events: c.inv, Namespaces: cfg.Namespaces, ImportMethod: cfg.ImportMethod,
		Options: importer.Options{
			ImporterImage: cfg.ImporterImage, StorageClass: cfg.StorageClass,
			MaxImageSize: cfg.MaxImageSize, DefaultSize: cfg.ImageClaimSize, AddrPolicy: cfg.ImageAddrPolicy,
			ImageCacheBudget: cfg.ImageCacheBudget,
		},
		ObserveImport: m.ObserveImport,
		ObjectSecret:  c.key,
	}
	if _, err := media.NewReconciler(mediaOpts); err != nil { // check the options now
		return nil, fmt.Errorf("media reconciler: %w", err)
	}
	powerSvc := power.New(writer, cl.dyn, cl.forcer)
	powerSvc.SetHoldTimeout(cfg.HeldPowerOnTimeout)
	powerRec := power.NewReconciler(powerSvc, c.inv, reconcileWorkers)
	recs := reconcilers{mediaCount: mediaCount, list: []reconciler{
		{ctrl: mediaCtrl, part: manager.EachTerm(func() (manager.Part, error) {
			rec, err := media.NewReconciler(mediaOpts) // a media reconciler runs once
			if err != nil {
				return nil, fmt.Errorf("media reconciler: %w", err)
			}
			return manager.PartFunc(rec.Run), nil
		})},
		{ctrl: powerRec.Controller(), part: manager.PartFunc(powerRec.Run)},
	}}
	m.Watch(metrics.Sources{Applies: writer.Stats, Media: recs.mediaStats, Controllers: recs.controllers,
		RebootPolicyFallbacks: writer.RebootPolicyFallbacks})
	consoleCfg := cfg.Console
	if consoleCfg == (console.Config{}) {
		consoleCfg = console.DefaultConfig()
	}
	consoles, err := console.New(cfg.Kube, console.FromVMs(c.inv), consoleCfg)
	if err != nil {
		return nil, err
	}
	graphical, err := vncconsole.New(cfg.GraphicalConsole, c.key, cl.screen, c.revs)
	if err != nil {
		return nil, fmt.Errorf("graphical console: %w", err)
	}
	evCfg := cfg.Events.WithDefaults()
	store := eventsub.NewStore(cl.kube, cfg.Namespace, evCfg.Secret, evCfg.Limits)
	store.ReadFrom(c.subs)
	con := &concerns{clients: cl, caches: c, cfg: cfg, writer: writer, console: consoles, media: mediaSvc, power: powerSvc, recs: recs, graphical: graphical,
		eventStore: store, events: backend.NewEvents(store, evCfg), bus: event.NewBus(cfg.EventBus)}
	con.log = eventlog.New(con.bus, eventlog.PerSystem)
	var ports protocols.IPMIPorts
	if cfg.IPMI.Enabled() {
		ports = ipmi.NewPortTable(cfg.IPMI, c.inv)
	}
	con.protocols = protocols.New(writer, ports)
	consoles.SetSwitches(protocols.Switches{VMs: c.inv})
	if con.streams, err = eventstream.New(cfg.SSE, con.bus, c.inv, c.revs); err != nil {
		return nil, fmt.Errorf("event streams: %w", err)
	}
	con.backend = backend.New(c.inv, writer, mediaSvc, powerSvc, nil)
	return con, nil
}

// redfishBackends are the backends the Redfish service answers through:
// the concerns' verbs, the authenticator, the EventService's
// subscriptions, each System's event log and, when the IPMI endpoint or
// the SSH console runs, their ports and switches (each Manager's
// NetworkProtocol).
func (con *concerns) redfishBackends() redfish.Backends {
	b := con.backend.Backends(con.caches.authn, con.events)
	b.Logs = con.log
	b.Consoles = con.graphical
	b.Thumbnails = thumbnails{cache: thumbnail.New(con.clients.forcer)}
	b.Streams = con.streams
	b.EventPatches = con.events
	if con.cfg.IPMI.Enabled() || con.cfg.SSHConsole.Listen != "" {
		b.Protocols = con.protocols
	}
	return b
}
