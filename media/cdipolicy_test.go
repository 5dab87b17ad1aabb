package media_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// cdiMaxImage is the maximum image size of TestMediaCDI's reconciler.
const cdiMaxImage = 8 << 20

// hosts is a resolver with fixed answers for some names, the system's
// resolver for the others.
type hosts map[string][]netip.Addr

func (h hosts) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if addrs, ok := h[host]; ok {
		return addrs, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}

// testCDIHostPolicy is the SSRF through CDI's importer, which checks no
// address it dials: an image URL whose host name resolves to an address
// the policy refuses (loopback under deny-loopback: "localhost" through
// the system resolver; the cloud metadata service: a name answered by the
// test's resolver) is refused at insert with the 400 of a literal refused
// IP, and nothing is created. The same name under a policy allowing
// loopback imports. Negative control: without the resolver (the check
// off) the refused name gets its DataVolume.
func testCDIHostPolicy(t *testing.T, e *env) {
	imageURL, _ := e.img.add("/policy-cdi.iso", 64<<10, false)
	u, err := url.Parse(imageURL)
	if err != nil {
		t.Fatal(err)
	}
	byName := "http://localhost:" + u.Port() + "/policy-cdi.iso"
	metadata := hosts{"metadata.attack.test": {netip.MustParseAddr("169.254.169.254")}}
	denyLoopback := download.AddrPolicy{DenyLoopback: true}
	for _, tc := range []struct {
		name     string
		policy   download.AddrPolicy
		resolver download.HostResolver
		image    string
		refused  string // the reason, "" when accepted
	}{
		{"loopback name refused", denyLoopback, net.DefaultResolver, byName, "host localhost resolves to "},
		{"metadata name", download.AddrPolicy{}, metadata, "http://metadata.attack.test/latest/meta-data/iam", "host metadata.attack.test resolves to 169.254.169.254, a refused cloud metadata address"},
		{"loopback name allowed", download.AddrPolicy{}, net.DefaultResolver, byName, ""},
		{"negative control names not resolved", denyLoopback, nil, byName, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := e.createVM(t, vmName(t))
			svc := newService(e.w, e.kube)
			svc.SetAddrPolicy(tc.policy)
			svc.SetHostResolver(tc.resolver)
			got, err := svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: tc.image})
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("insert %s: %v", tc.image, err)
				}
				dv := e.dataVolumeOf(t, key, got.InsertID)
				if src, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "http", "url"); src != tc.image {
					t.Errorf("DataVolume source %q, want %q", src, tc.image)
				}
				if tc.resolver != nil {
					e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
				}
				if err := e.svc.Eject(t.Context(), key, slot); err != nil {
					t.Fatal(err)
				}
				return
			}
			var bad *download.InvalidURLError
			if !errors.As(err, &bad) || !strings.Contains(bad.Reason, tc.refused) {
				t.Fatalf("insert %s: %v, want an InvalidURLError (Redfish 400 PropertyValueFormatError) saying %q", tc.image, err, tc.refused)
			}
			if left := e.importObjects(t.Context(), key); len(left) > 0 {
				t.Errorf("refused insert left %v", left)
			}
		})
	}
}

// importObjects lists what an insert into key's slot would have made: the
// slot on the VM, DataVolumes, the claim, import Secrets and ConfigMaps.
func (e *env) importObjects(ctx context.Context, key system.Key) []string {
	var out []string
	vm, err := e.liveVM(ctx, key)
	if err != nil {
		return []string{"VM: " + err.Error()}
	}
	if s, ok := vm.Slots[slot]; ok {
		out = append(out, fmt.Sprintf("slot %+v", s))
	}
	dvs, err := e.dataVolumes(ctx)
	if err != nil {
		return append(out, err.Error())
	}
	for i := range dvs {
		if ownerIs(&dvs[i], key.Name) {
			out = append(out, "DataVolume "+dvs[i].GetName())
		}
	}
	if _, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, media.ClaimName(key, slot), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		out = append(out, fmt.Sprintf("PVC %s (err %v)", media.ClaimName(key, slot), err))
	}
	secrets, err := e.adminKube.CoreV1().Secrets(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return append(out, err.Error())
	}
	cms, err := e.adminKube.CoreV1().ConfigMaps(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return append(out, err.Error())
	}
	var objs []metav1.Object
	for i := range secrets.Items {
		objs = append(objs, &secrets.Items[i])
	}
	for i := range cms.Items {
		objs = append(objs, &cms.Items[i])
	}
	for _, obj := range objs {
		if ownerIs(obj, key.Name) {
			out = append(out, fmt.Sprintf("%T %s", obj, obj.GetName()))
		}
	}
	return out
}

// testCDIMaxImage: the DataVolume requests at most the maximum image size,
// so an image one byte larger does not fit its PVC: CDI's importer fails
// ("Virtual image size N is larger than the reported available storage
// M"), cdi-controller shortens that to "DataVolume too small to contain
// image", and the slot ends Failed with it and the bridge's reason.
func testCDIMaxImage(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	imageURL, _ := e.img.add("/above-max-cdi.iso", cdiMaxImage+1, false)
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: imageURL})
	if err != nil {
		t.Fatal(err)
	}
	dv := e.dataVolumeOf(t, key, got.InsertID)
	if size, _, _ := unstructured.NestedString(dv.Object, "spec", "storage", "resources", "requests", "storage"); size != "8Mi" {
		t.Errorf("DataVolume requests %q, want the maximum image size 8Mi", size)
	}
	e.waitFailed(t, key, "CDI DataVolume "+got.ClaimName+" failed: DataVolume too small to contain image; the DataVolume requests the maximum image size 8Mi")
}
