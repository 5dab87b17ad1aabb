package testcluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// process is one child (etcd or kube-apiserver) with its output in a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	err     error         // exit status, valid after done is closed
}

// startProcess starts bin with args in its own process group, output to
// dir/<name>.log.
func startProcess(name, bin string, args []string, dir string) (*process, error) {
	p, stdin, err := startProcessWith(name, bin, args, nil, dir, nil)
	if err != nil {
		return nil, err
	}
	_ = stdin.Close() // these children read nothing
	return p, nil
}

// startProcessWith is startProcess with env added to this process's
// environment, attrs changed by attr (when not nil), and a pipe to its
// stdin.
func startProcessWith(name, bin string, args, env []string, dir string, attr func(*syscall.SysProcAttr)) (*process, io.WriteCloser, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...) // bin is our own tool binary; lifetime is managed by stop
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if attr != nil {
		attr(cmd.SysProcAttr)
	}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		_ = logFile.Close() // not started
		return nil, nil, fmt.Errorf("stdin of %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	started := make(chan error, 1)
	// Pdeathsig fires when the forking OS thread exits, not the process:
	// start and wait on one locked thread that lives as long as the child.
	go func() {
		runtime.LockOSThread()
		defer close(p.done)
		defer logFile.Close() // output file of a finished process
		if err := cmd.Start(); err != nil {
			p.err = err
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	return p, stdin, nil
}

// pid is the process id of a running p (0 for nil or exited).
func (p *process) pid() int {
	if p == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("terminate %s (pid %d): %w", p.name, pgid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", p.name, pgid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, pgid)
	}
}

// logTail returns the last n lines of the process's log.
func (p *process) logTail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(read %s: %v)", p.logPath, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// exitError describes an early exit with the end of the log.
func (p *process) exitError() error {
	err := p.err
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("%s exited early (%w); last log lines:\n%s", p.name, err, p.logTail(30))
}
