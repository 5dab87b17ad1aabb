package importer

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
)

// An import pod's labels, name and owner reference can be copied by
// anyone who can create pods in the namespace, and its name is known from
// the VM's annotations as soon as an insert is accepted: a pod planted
// under that name before the bridge creates its own would report the
// import (its termination message: the bytes and the sha256 the image
// cache records). So the bridge signs the pods it creates: a MAC
// ([objmac.Annotation], [ImportPodPurpose]) over the pod's namespace,
// name and owners and what it runs (image, command, arguments, volumes).
// A pod without a valid MAC is not the bridge's, whatever its labels; a
// copy of the MAC onto a pod that runs anything else does not verify.

// ImportPodPurpose is the [objmac.Derive] purpose of the import pods'
// MACs.
const ImportPodPurpose = "import-pod"

// podMACFields is the identity an import pod's MAC covers.
func podMACFields(p *corev1.Pod) []string {
	f := []string{"import-pod", p.Namespace, p.Name}
	for _, r := range p.OwnerReferences {
		f = append(f, r.Kind+"/"+r.Name+"/"+string(r.UID))
	}
	return f
}

// podMACData is what an import pod's importer container runs, as its MAC
// covers it: image, command, arguments and the volumes it mounts. Other
// containers and volumes (a service mesh's sidecar, what an admission
// webhook adds) are not covered, so a mutated pod stays the bridge's; a
// webhook that rewrites the importer's image makes it foreign (give
// --importer-image the rewritten name).
func podMACData(p *corev1.Pod) map[string]string {
	d := map[string]string{}
	mounted := map[string]bool{}
	for _, c := range p.Spec.Containers {
		if c.Name != ImporterContainer {
			continue
		}
		d["run"] = strings.Join(append(append([]string{c.Image}, c.Command...), c.Args...), "\x00")
		for _, m := range c.VolumeMounts {
			mounted[m.Name] = true
			d["mount/"+m.Name] = m.MountPath
		}
	}
	for _, v := range p.Spec.Volumes {
		if !mounted[v.Name] {
			continue
		}
		var src string
		switch {
		case v.PersistentVolumeClaim != nil:
			src = "pvc/" + v.PersistentVolumeClaim.ClaimName
		case v.Secret != nil:
			src = "secret/" + v.Secret.SecretName
		case v.ConfigMap != nil:
			src = "configmap/" + v.ConfigMap.Name
		default:
			src = "other"
		}
		d["volume/"+v.Name] = src
	}
	return d
}

// SignPod sets p's MAC under k (a zero k signs nothing).
func SignPod(k objmac.Key, p *corev1.Pod) {
	if !k.Valid() {
		return
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[objmac.Annotation] = k.Sum(podMACFields(p), podMACData(p))
}

// PodSigned reports whether p (whole: its spec is read) carries the
// bridge's MAC under k. Under a zero k (no object secret) every pod is
// taken as signed: the labels and owner reference alone decide.
func PodSigned(k objmac.Key, p *corev1.Pod) bool {
	if !k.Valid() {
		return true
	}
	return k.Verify(p.Annotations[objmac.Annotation], podMACFields(p), podMACData(p))
}

// cachedSigned marks a cached pod whose MAC verified when it entered the
// cache (the trim drops every annotation it does not keep, a planted
// one of this name included, before setting it).
const cachedSigned = "redfish-bridge.io/signed"

// TrimCachedPods is [TrimCached] for pods the bridge signs under k: a
// cached pod is marked when its MAC verified on the whole pod (the cache
// holds no spec to verify it again), so [CachedPodSigned] tells a signed
// pod from a planted one.
func TrimCachedPods(k objmac.Key, extra ...string) func(obj any) (any, error) {
	trim := TrimCached(extra...)
	return func(obj any) (any, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return trim(obj)
		}
		// A pod without containers was trimmed already (client-go may
		// transform an object again; a pod the apiserver holds has at
		// least one container): its verdict stands.
		signed := CachedPodSigned(p)
		if len(p.Spec.Containers) > 0 {
			signed = PodSigned(k, p)
		}
		out, err := trim(p)
		if kept, ok := out.(*corev1.Pod); ok && signed {
			if kept.Annotations == nil {
				kept.Annotations = map[string]string{}
			}
			kept.Annotations[cachedSigned] = "true"
		}
		return out, err
	}
}

// CachedPodSigned reports whether a pod cached through [TrimCachedPods]
// verified when it was cached.
func CachedPodSigned(p *corev1.Pod) bool { return p.Annotations[cachedSigned] == "true" }
