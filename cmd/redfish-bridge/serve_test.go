package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseServe(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := file("full.yaml", `
namespaces: [team-a, team-b]
listen: ":9443"
metrics-listen: ":9191"
leader-elect: false
lease-name: from-file
insecure-http: true
service-uuid: file-uuid
`)
	commaList := file("comma.yaml", "namespaces: \"a,b\"\n")
	unknown := file("unknown.yaml", "listen: \":1\"\nlisten-address: \":2\"\n")
	badBool := file("badbool.yaml", "leader-elect: maybe\n")
	listForScalar := file("list.yaml", "listen: [a, b]\n")
	base := []string{"--service-uuid", "u", "--namespace", "bridge"}
	cacheKey := strings.Repeat("0123456789abcdef", 4)
	keyFile := file("cache-key", cacheKey+"\n")
	shortKey := file("short-key", "0123456789abcdef\n")

	// got is the part of the options these cases look at.
	type got struct {
		Namespaces, Listen, MetricsListen, LeaseName, PodName, ServiceUUID string
		ImageCAConfigMap, ImageCAKey                                       string
		LeaderElect, Insecure                                              bool
		QPS                                                                float64
		Burst                                                              int
		MaxImage                                                           int64
		Claim                                                              string
		HeldPowerOn                                                        time.Duration
		ImageCache                                                         bool
		ImageCacheBytes                                                    int64
		ImageCacheKey                                                      string
	}
	defaults := got{Listen: ":8443", MetricsListen: ":9090", LeaseName: "redfish-bridge", PodName: "pod-0", ServiceUUID: "u", LeaderElect: true,
		ImageCAKey: "ca.crt", QPS: defaultKubeQPS, Burst: defaultKubeBurst, MaxImage: 64 << 30, Claim: "8Gi", HeldPowerOn: 10 * time.Minute}
	with := func(edit func(*got)) got { g := defaults; edit(&g); return g }
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    got
		wantErr string
	}{
		{name: "defaults", args: base, want: defaults},
		{name: "file", args: append([]string{"--config", full}, base...), want: with(func(g *got) {
			g.Namespaces, g.Listen, g.MetricsListen, g.LeaseName, g.LeaderElect, g.Insecure = "team-a,team-b", ":9443", ":9191", "from-file", false, true
		})},
		{name: "config from env", args: base, env: map[string]string{"REDFISH_BRIDGE_CONFIG": commaList},
			want: with(func(g *got) { g.Namespaces = "a,b" })},
		{name: "flag beats env beats file", args: append([]string{"--config", full, "--listen", ":1"}, base...),
			env: map[string]string{"REDFISH_BRIDGE_LISTEN": ":2", "REDFISH_BRIDGE_LEASE_NAME": "from-env"},
			want: with(func(g *got) {
				g.Namespaces, g.Listen, g.MetricsListen, g.LeaseName, g.LeaderElect, g.Insecure = "team-a,team-b", ":1", ":9191", "from-env", false, true
			})},
		{name: "pod name from env", args: base, env: map[string]string{"REDFISH_BRIDGE_POD_NAME": "other"},
			want: with(func(g *got) { g.PodName = "other" })},
		{name: "unknown key", args: append([]string{"--config", unknown}, base...), wantErr: `unknown key "listen-address"`},
		{name: "bad bool", args: append([]string{"--config", badBool}, base...), wantErr: `key "leader-elect": value "maybe"`},
		{name: "list for a scalar", args: append([]string{"--config", listForScalar}, base...), wantErr: `key "listen": a list is not valid here`},
		{name: "missing file", args: append([]string{"--config", filepath.Join(dir, "nope.yaml")}, base...), wantErr: "config file: open"},
		{name: "bad env", args: base, env: map[string]string{"REDFISH_BRIDGE_LEADER_ELECT": "sometimes"}, wantErr: "REDFISH_BRIDGE_LEADER_ELECT="},
		{name: "unknown import method", args: append([]string{"--import-method", "ftp"}, base...), wantErr: "--import-method"},
		{name: "bad image address policy", args: append([]string{"--image-addr-policy", "deny=not-a-prefix"}, base...), wantErr: "--image-addr-policy"},
		{name: "image CA bundle from the chart's config", args: base,
			env:  map[string]string{"REDFISH_BRIDGE_IMAGE_CA_CONFIGMAP": "metal3-ironic-ca", "REDFISH_BRIDGE_IMAGE_CA_KEY": "tls.crt"},
			want: with(func(g *got) { g.ImageCAConfigMap, g.ImageCAKey = "metal3-ironic-ca", "tls.crt" })},
		{name: "uuid required", args: []string{"--namespace", "x"}, wantErr: "--service-uuid"},
		{name: "kube rate limit", args: append([]string{"--kube-qps", "50"}, base...), env: map[string]string{"REDFISH_BRIDGE_KUBE_BURST": "80"},
			want: with(func(g *got) { g.QPS, g.Burst = 50, 80 })},
		{name: "image sizes", args: append([]string{"--max-image-size", "2Gi"}, base...), env: map[string]string{"REDFISH_BRIDGE_IMAGE_CLAIM_SIZE": "1Gi"},
			want: with(func(g *got) { g.MaxImage, g.Claim = 2<<30, "1Gi" })},
		{name: "absurd maximum image size", args: append([]string{"--max-image-size", "8Ei"}, base...), wantErr: "--max-image-size"},
		{name: "zero maximum image size", args: append([]string{"--max-image-size", "0"}, base...), wantErr: "--max-image-size"},
		{name: "bad claim size", args: append([]string{"--image-claim-size", "-1Gi"}, base...), wantErr: "--image-claim-size"},
		{name: "kube rate limit positive", args: append([]string{"--kube-qps", "0"}, base...), wantErr: "--kube-qps and --kube-burst must be positive"},
		{name: "held power-on timeout", args: base, env: map[string]string{"REDFISH_BRIDGE_HELD_POWER_ON_TIMEOUT": "25m"},
			want: with(func(g *got) { g.HeldPowerOn = 25 * time.Minute })},
		{name: "image cache and its budget", args: append([]string{"--image-cache", "--image-cache-size", "100Gi", "--image-cache-key-file", keyFile}, base...),
			want: with(func(g *got) { g.ImageCache, g.ImageCacheBytes, g.ImageCacheKey = true, 100<<30, cacheKey })},
		{name: "image cache without a key file", args: append([]string{"--image-cache"}, base...), wantErr: "--image-cache needs --image-cache-key-file"},
		{name: "image cache key too short", args: append([]string{"--image-cache", "--image-cache-key-file", shortKey}, base...), wantErr: "16 bytes, want at least 32"},
		{name: "key file unread without the cache", args: append([]string{"--image-cache-key-file", shortKey}, base...), want: defaults},
		{name: "negative image cache budget", args: append([]string{"--image-cache-size", "-1Gi"}, base...), wantErr: "--image-cache-size"},
		{name: "held power-on timeout positive", args: append([]string{"--held-power-on-timeout", "0s"}, base...), wantErr: "--held-power-on-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"POD_NAME": "pod-0"}
			for k, v := range tc.env {
				env[k] = v
			}
			o, err := parseServe(tc.args, streams{err: io.Discard, lookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := got{o.namespaces, o.listen, o.metricsListen, o.leaseName, o.podName, o.serviceUUID, o.imageCAConfigMap, o.imageCAKey, o.leaderElect, o.insecure, o.kubeQPS, o.kubeBurst,
				o.maxImageBytes, o.imageClaim.String(), o.heldPowerOn, o.imageCache, o.imageCacheBytes, string(o.imageCacheKey)}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}
