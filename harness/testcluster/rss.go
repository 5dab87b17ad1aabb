package testcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// APIServerRSS returns kube-apiserver's resident set size in bytes
// (VmRSS from /proc/<pid>/status; Linux only).
func (c *Cluster) APIServerRSS() (int64, error) {
	if c.apiserver == nil || c.apiserver.exited() {
		return 0, errors.New("apiserver RSS: kube-apiserver is not running")
	}
	return ProcessRSS(c.apiserver.cmd.Process.Pid)
}

// ProcessRSS returns process pid's resident set size in bytes (VmRSS from
// /proc/<pid>/status; Linux only).
func ProcessRSS(pid int) (int64, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read RSS: %w", err)
	}
	defer f.Close() // read-only
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// VmRSS:	  265432 kB
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse VmRSS %q in %s: %w", rest, path, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return 0, fmt.Errorf("no VmRSS in %s", path)
}

// PIDs returns the process ids of kube-apiserver and etcd (each also leads
// its process group), for checks that nothing outlives Stop.
func (c *Cluster) PIDs() []int {
	var pids []int
	for _, p := range []*process{c.apiserver, c.etcd} {
		if p != nil {
			pids = append(pids, p.cmd.Process.Pid)
		}
	}
	return pids
}
