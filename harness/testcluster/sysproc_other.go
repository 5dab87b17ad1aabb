//go:build !linux

package testcluster

import "syscall"

// sysProcAttr puts the child in its own process group so Stop can kill
// everything it forked. Only Linux has Pdeathsig.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
