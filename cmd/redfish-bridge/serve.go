package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/redfish-bridge/redfish-bridge/service"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// runServe runs the bridge against a cluster. Every flag can also be set
// with an environment variable REDFISH_BRIDGE_<FLAG> (dashes as
// underscores), which the chart uses.
func runServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file; empty uses the in-cluster service account")
	namespaces := fs.String("namespaces", "", "comma-separated namespaces whose VMs are served; empty means all")
	namespace := fs.String("namespace", os.Getenv("POD_NAMESPACE"), "namespace of the bridge's own Secrets and ConfigMap")
	users := fs.String("users-secret", "redfish-bridge-users", "Secret with users (bcrypt hashes) and their scopes")
	sessionKey := fs.String("session-key-secret", "redfish-bridge-session-key", "Secret with the session signing key (created when missing)")
	revocations := fs.String("sessions-configmap", "redfish-bridge-sessions", "ConfigMap recording ended sessions")
	listen := fs.String("listen", ":8443", "HTTPS listen address")
	certFile := fs.String("tls-cert", "", "TLS certificate file (PEM)")
	keyFile := fs.String("tls-key", "", "TLS private key file (PEM)")
	insecure := fs.Bool("insecure-http", false, "serve plain HTTP (only behind a TLS-terminating proxy)")
	serviceUUID := fs.String("service-uuid", "", "Redfish service root UUID, the same on every replica (required)")
	importer := fs.String("importer-image", "", "image of the ISO import pods (default: the bridge's own)")
	storageClass := fs.String("storage-class", "", "StorageClass of image PVCs (default: the cluster default)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := envOverrides(fs); err != nil {
		return err
	}
	if *serviceUUID == "" {
		return errors.New("serve: --service-uuid (REDFISH_BRIDGE_SERVICE_UUID) is required")
	}
	if *namespace == "" {
		return errors.New("serve: --namespace (or POD_NAMESPACE) is required")
	}
	var tlsCfg *tls.Config
	switch {
	case *certFile != "" && *keyFile != "":
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return fmt.Errorf("serve: --tls-cert/--tls-key: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	case !*insecure:
		return errors.New("serve: TLS is the default: give --tls-cert and --tls-key, or --insecure-http explicitly")
	}
	kube, err := kubeConfig(*kubeconfig)
	if err != nil {
		return err
	}
	run, err := service.Start(ctx, service.Config{
		Kube: kube, Namespaces: splitList(*namespaces), Namespace: *namespace,
		UsersSecret: *users, SessionKeySecret: *sessionKey, RevocationsConfigMap: *revocations,
		Listen: *listen, TLS: tlsCfg, ServiceUUID: *serviceUUID, Version: version,
		ImporterImage: *importer, StorageClass: *storageClass, Log: slog.Default(),
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return run.Wait()
}

func kubeConfig(path string) (*rest.Config, error) {
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	var cfg *rest.Config
	var err error
	if path == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", path)
	}
	if err != nil {
		return nil, fmt.Errorf("serve: kubernetes client configuration: %w", err)
	}
	cfg.UserAgent = "redfish-bridge/" + version
	return cfg, nil
}

// envOverrides sets every flag not given on the command line from
// REDFISH_BRIDGE_<NAME>.
func envOverrides(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := "REDFISH_BRIDGE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && !given[f.Name] && err == nil {
			if serr := f.Value.Set(v); serr != nil {
				err = fmt.Errorf("serve: %s=%q: %w", env, v, serr)
			}
		}
	})
	return err
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
