package protocols

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// recorded is a Writer holding one VM's switches.
type recorded struct{ p system.Protocols }

func (r *recorded) Read(_ context.Context, key system.Key) (*apply.VM, error) {
	return &apply.VM{Key: key, Protocols: r.p}, nil
}

func (r *recorded) Protocols(_ context.Context, key system.Key, sw system.ProtocolSwitch) (*apply.VM, error) {
	sw.MergeInto(&r.p)
	return &apply.VM{Key: key, Protocols: r.p}, nil
}

type ports map[system.Key]int

func (p ports) IPMIPort(key system.Key) (int, bool) { port, ok := p[key]; return port, ok }

type sshPort int

func (p sshPort) Port() (int, bool) { return int(p), true }

// TestTable: a System switched off keeps its IPMI port, shown disabled;
// one without a port is disabled, switched or not; SSH follows its switch
// on the console's port; a part that does not run is not served.
func TestTable(t *testing.T) {
	vm1, vm2 := system.Key{Namespace: "ns", Name: "vm1"}, system.Key{Namespace: "ns", Name: "vm2"}
	off, on := false, true
	w := &recorded{}
	tbl := New(w, ports{vm1: 6231})
	tbl.SetSSH(sshPort(2222))
	check := func(what string, key system.Key, want redfish.ManagerProtocols) {
		t.Helper()
		got, err := tbl.Protocols(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("all on", vm1, redfish.ManagerProtocols{IPMI: redfish.Protocol{Served: true, Enabled: true, Port: 6231}, SSH: redfish.Protocol{Served: true, Enabled: true, Port: 2222}})
	check("no IPMI port", vm2, redfish.ManagerProtocols{IPMI: redfish.Protocol{Served: true}, SSH: redfish.Protocol{Served: true, Enabled: true, Port: 2222}})
	if err := tbl.SwitchProtocols(t.Context(), vm1, system.ProtocolSwitch{IPMI: &off, SSH: &off}); err != nil {
		t.Fatal(err)
	}
	check("both off", vm1, redfish.ManagerProtocols{IPMI: redfish.Protocol{Served: true, Port: 6231}, SSH: redfish.Protocol{Served: true, Port: 2222}})
	if err := tbl.SwitchProtocols(t.Context(), vm1, system.ProtocolSwitch{IPMI: &on}); err != nil {
		t.Fatal(err)
	}
	check("IPMI on again", vm1, redfish.ManagerProtocols{IPMI: redfish.Protocol{Served: true, Enabled: true, Port: 6231}, SSH: redfish.Protocol{Served: true, Port: 2222}})

	bare := New(w, nil)
	if bare.Served() {
		t.Error("no IPMI endpoint, no SSH console: Served")
	}
	check2, err := bare.Protocols(t.Context(), vm1)
	if err != nil || check2 != (redfish.ManagerProtocols{}) {
		t.Errorf("nothing runs: %+v %v, want nothing served", check2, err)
	}
}

// vms is a VM cache of annotated VMs.
type vms map[system.Key]map[string]string

func (v vms) VM(key system.Key) (*unstructured.Unstructured, error) {
	a, ok := v[key]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "virtualmachines"}, key.Name)
	}
	u := &unstructured.Unstructured{}
	u.SetAnnotations(a)
	return u, nil
}

// TestSwitches: the console's gate reads the annotation redfish-protocols
// writes; a VM with none, a malformed one, or no VM has every protocol on.
func TestSwitches(t *testing.T) {
	k := func(name string) system.Key { return system.Key{Namespace: "ns", Name: name} }
	s := Switches{VMs: vms{
		k("ssh-off"):   {apply.AnnotationProtocols: `{"sshOff":true}`},
		k("plain"):     {},
		k("malformed"): {apply.AnnotationProtocols: `{`},
	}}
	for _, tt := range []struct {
		vm       string
		ipmi, ss bool
	}{{"ssh-off", true, false}, {"plain", true, true}, {"malformed", true, true}, {"missing", true, true}} {
		if got := [2]bool{s.ProtocolEnabled(k(tt.vm), system.ProtocolIPMI), s.ProtocolEnabled(k(tt.vm), system.ProtocolSSH)}; got != [2]bool{tt.ipmi, tt.ss} {
			t.Errorf("%s: IPMI, SSH enabled %v, want %v", tt.vm, got, [2]bool{tt.ipmi, tt.ss})
		}
	}
}
