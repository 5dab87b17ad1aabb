package ipmi

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Inventory is what the part reads of the VM cache (inventory.Inventory).
type Inventory interface {
	ListVMs(namespace string, selector labels.Selector) ([]metav1.Object, error)
	VM(key system.Key) (*unstructured.Unstructured, error)
	AddVMHandler(handle func(key system.Key)) (remove func() error, err error)
}

// part runs the Server and keeps its ports those the cached VMs name.
type part struct {
	srv *Server
	inv Inventory

	mu      sync.Mutex
	pending map[system.Key]struct{} // VMs changed since the last sync
	changed chan struct{}
	// annotated is each VM's PortAnnotation value (VMs without none).
	annotated map[system.Key]string
	// off are the VMs whose IPMI an Administrator switched off
	// (apply.AnnotationProtocols): their ports are not served.
	off  map[system.Key]struct{}
	last string // the problems last logged
}

// Add adds the IPMI endpoint to mgr's Servers group (it reads the
// caches): users and throttle are the Redfish service's (one password
// throttle for both), b the verbs the Redfish backend calls, consoles the
// console opener Serial-over-LAN shares with the SSH console. Nothing is
// added when cfg turns IPMI off.
func Add(mgr *manager.Manager, cfg Config, inv Inventory, users auth.Users, throttle *auth.Throttle, b Backend, consoles Consoles) error {
	if !cfg.Enabled() {
		return nil
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	p := &part{
		srv: NewServer(cfg, users, b, throttle, consoles), inv: inv,
		pending: map[system.Key]struct{}{}, changed: make(chan struct{}, 1), annotated: map[system.Key]string{},
		off: map[system.Key]struct{}{},
	}
	if err := mgr.Add(p, manager.Servers); err != nil {
		return fmt.Errorf("ipmi: %w", err)
	}
	return nil
}

// Start serves until ctx ends: it listens on the ports the VMs name and
// follows their changes (each changed VM read once from the cache).
func (p *part) Start(ctx context.Context) error {
	remove, err := p.inv.AddVMHandler(p.note)
	if err != nil {
		return fmt.Errorf("ipmi: watch VMs: %w", err)
	}
	defer func() { _ = remove() }()
	vms, err := p.inv.ListVMs("", labels.Everything())
	if err != nil {
		return fmt.Errorf("ipmi: list VMs: %w", err)
	}
	for _, vm := range vms {
		p.note(system.Key{Namespace: vm.GetNamespace(), Name: vm.GetName()})
	}
	done := make(chan error, 1)
	go func() { done <- p.srv.Start(ctx) }()
	for {
		select {
		case <-ctx.Done():
			return <-done
		case <-p.changed:
			p.sync(ctx)
		}
	}
}

// note records that VM key changed.
func (p *part) note(key system.Key) {
	p.mu.Lock()
	p.pending[key] = struct{}{}
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default: // a sync is pending: it reads this key too
	}
}

// sync reads the changed VMs' annotations and serves the ports they name.
func (p *part) sync(ctx context.Context) {
	p.mu.Lock()
	keys := p.pending
	p.pending = map[system.Key]struct{}{}
	p.mu.Unlock()
	for key := range keys {
		vm, err := p.inv.VM(key)
		switch {
		case apierrors.IsNotFound(err):
			delete(p.annotated, key)
			delete(p.off, key)
		case err != nil:
			continue
		default:
			if v, ok := vm.GetAnnotations()[PortAnnotation]; ok {
				p.annotated[key] = v
			} else {
				delete(p.annotated, key)
			}
			if apply.ProtocolsOf(vm).Enabled(system.ProtocolIPMI) {
				delete(p.off, key)
			} else {
				p.off[key] = struct{}{}
			}
		}
	}
	ports, err := Ports(p.annotated, p.srv.cfg)
	logProblems(ctx, err, &p.last)
	for port, key := range ports {
		if _, off := p.off[key]; off {
			delete(ports, port) // switched off: it keeps its port, unserved
		}
	}
	_ = p.srv.Sync(ctx, ports) // a port that cannot be bound is logged; the others are served
}
