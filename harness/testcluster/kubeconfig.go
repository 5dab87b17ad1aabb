package testcluster

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restConfig is a token identity on host. QPS is raised: the tests hammer
// one local apiserver on purpose.
func restConfig(host string, caPEM []byte, token string) *rest.Config {
	return &rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
		QPS:             200,
		Burst:           400,
	}
}

// virtHandlerConfig is admin impersonating virt-handler on NodeName
// (system:masters keeps its permissions simple: no ClusterRole to mirror).
func virtHandlerConfig(admin *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: VirtHandlerUser,
		Groups:   []string{"system:masters"},
		Extra:    map[string][]string{nodeNameExtra: {NodeName}},
	}
	return cfg
}

// writeKubeconfig writes a one-context kubeconfig for user to path.
func writeKubeconfig(path, host string, caPEM []byte, user, token, namespace string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testcluster"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[user] = &clientcmdapi.Context{Cluster: "testcluster", AuthInfo: user, Namespace: namespace}
	cfg.CurrentContext = user
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
