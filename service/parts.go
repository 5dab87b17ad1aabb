package service

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/eventlog"
	"github.com/redfish-bridge/redfish-bridge/eventsource"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/sshconsole"
	"github.com/redfish-bridge/redfish-bridge/virtapi"
	"github.com/redfish-bridge/redfish-bridge/vncconsole"
)

// clients are the bridge's clients of the apiserver, one of each kind.
type clients struct {
	dyn    dynamic.Interface
	kube   kubernetes.Interface
	forcer *virtapi.Client  // KubeVirt's force-stop subresource (power)
	screen *virtapi.Screens // KubeVirt's vnc subresource (the graphical console)
}

func newClients(cfg *rest.Config) (clients, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return clients{}, fmt.Errorf("dynamic client: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return clients{}, fmt.Errorf("kubernetes client: %w", err)
	}
	forcer, err := virtapi.New(cfg)
	if err != nil {
		return clients{}, err
	}
	screen, err := virtapi.NewScreens(cfg)
	if err != nil {
		return clients{}, err
	}
	return clients{dyn: dyn, kube: kube, forcer: forcer, screen: screen}, nil
}

// addParts adds the long-running parts built on the concerns (clients,
// caches, configuration, writer, verbs) to mgr: the reconcilers (Leader
// group) and, one line each, the parts of other packages, each added by
// its package's own function, e.g. console.Add(mgr, con.caches.inv, ...)
// (docs/extending.md, "A long-running part").
func addParts(mgr *manager.Manager, con *concerns) (addedParts, error) {
	ssh, sshErr := sshconsole.Add(mgr, con.cfg.SSHConsole, con.caches.authn, con.console)
	if ssh != nil {
		con.protocols.SetSSH(ssh)
	}
	return addedParts{ssh: ssh}, errors.Join(
		con.recs.addTo(mgr),
		sshErr,
		ipmi.Add(mgr, con.cfg.IPMI, con.caches.inv, con.caches.authn.Users(), con.caches.authn.Throttle(),
			con.backend.IPMI(), con.console),
		eventdelivery.Add(mgr, con.cfg.Events.WithDefaults(), eventdelivery.Deps{Bus: con.bus, Kube: con.clients.kube,
			Namespace: con.cfg.Namespace, Subs: con.caches.subs, Store: con.eventStore, Users: con.caches.users, VMs: con.caches.inv}),
		eventsource.Add(mgr, con.caches.inv, con.bus),
		eventlog.Add(mgr, con.log),
		vncconsole.Add(mgr, con.graphical),
	)
}

// addedParts are the parts addParts added that Start reports on once
// they serve (their addresses).
type addedParts struct {
	ssh *sshconsole.Part // nil: no SSH console
}

// addProbes adds the server of /metrics, /healthz and /readyz (h) to the
// Probes group: it listens before the caches start syncing, so a probe is
// answered and /readyz says why not. Nil when cfg.MetricsListen is "".
func addProbes(mgr *manager.Manager, cfg Config, h http.Handler) (*server, error) {
	if cfg.MetricsListen == "" {
		return nil, nil
	}
	return addServer(mgr, manager.Probes, "metrics", cfg.MetricsListen, h, nil, cfg.Limits)
}

// addServer adds the server part name serving h on addr to group g.
func addServer(mgr *manager.Manager, g manager.Group, name, addr string, h http.Handler, tlsCfg *tls.Config, limits Limits) (*server, error) {
	s := newServer(name, addr, h, tlsCfg, limits)
	if err := mgr.Add(s, g); err != nil {
		return nil, fmt.Errorf("%s server: %w", name, err)
	}
	return s, nil
}
