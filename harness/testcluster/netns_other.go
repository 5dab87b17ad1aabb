//go:build !linux

package testcluster

// netnsProcess needs Linux's network namespaces: elsewhere CDI's programs
// do not run in the test cluster.
type netnsProcess struct{ *process }

func startInNetNS(string, string, []string, []string, string, []int, map[string]string) (*netnsProcess, error) {
	return nil, errNoNetNS
}

func (*netnsProcess) exposeOn(string, int) (string, error) { return "", errNoNetNS }

func canNetNS() error { return errNoNetNS }

func linkToHost(int) (string, error) { return "", errNoNetNS }
