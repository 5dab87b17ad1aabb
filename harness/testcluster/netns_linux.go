package testcluster

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// CDI's cdi-controller and cdi-apiserver both listen on the fixed port
// 8443 of every address (metrics, and the API and webhooks; neither has a
// flag for it), so two of them, or one beside anything else on 8443, cannot
// share a network namespace. The test cluster runs each in a network
// namespace of its own (as each runs in its own pod), with only its
// loopback up, and relays TCP across: the apiserver's loopback port into
// the namespace (the process's kubeconfig stays the cluster's), and a
// port of the host into the process's 8443 for what kube-apiserver calls.
// Creating a network namespace needs root (CAP_SYS_ADMIN).

// netnsProcess is a process started in a network namespace of its own,
// held before exec until its relays listen.
type netnsProcess struct {
	*process
	nsPath string
	mu     sync.Mutex
	relays []net.Listener
}

// startInNetNS starts bin with args and env in a new network namespace:
// it brings the namespace's loopback up, relays 127.0.0.1:port of the
// namespace to 127.0.0.1:port of the host for each of hostPorts (the
// apiserver's), then lets the program run. With binds (target directory
// -> source directory) the program also gets a mount namespace of its own
// (private from /, so nothing propagates back to the host) in which each
// source is bind-mounted on its target, as a pod's volumes are: for a
// program that reads fixed paths (cdi-controller's /var/run/cdi/token/keys).
func startInNetNS(name, bin string, args, env []string, dir string, hostPorts []int, binds map[string]string) (*netnsProcess, error) {
	// The shell mounts, waits for one line on stdin, then becomes the
	// program.
	script := `read -r _ && exec "$0" "$@"`
	flags := uintptr(syscall.CLONE_NEWNET)
	if len(binds) > 0 {
		flags |= syscall.CLONE_NEWNS
		script = "mount --make-rprivate / && " + bindScript(binds) + script
	}
	shArgs := append([]string{"-c", script, bin}, args...)
	p, stdin, err := startProcessWith(name, "/bin/sh", shArgs, env, dir, func(a *syscall.SysProcAttr) {
		a.Cloneflags |= flags
	})
	if err != nil {
		return nil, err
	}
	np := &netnsProcess{process: p, nsPath: "/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/ns/net"}
	fail := func(err error) (*netnsProcess, error) {
		np.closeRelays()
		return nil, errors.Join(err, p.stop(0))
	}
	if err := inNetNS(np.nsPath, loopbackUp); err != nil {
		return fail(fmt.Errorf("%s: bring its namespace's loopback up: %w", name, err))
	}
	for _, port := range hostPorts {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		var l net.Listener
		err := inNetNS(np.nsPath, func() error {
			var err error
			l, err = net.Listen("tcp", addr)
			return err
		})
		if err != nil {
			return fail(fmt.Errorf("%s: listen on %s in its namespace: %w", name, addr, err))
		}
		np.addRelay(l, func() (net.Conn, error) { return net.Dial("tcp", addr) })
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		return fail(fmt.Errorf("%s: release it: %w", name, err))
	}
	_ = stdin.Close() // the shell read its line; nothing more to say
	go func() {
		<-p.done
		np.closeRelays()
	}()
	return np, nil
}

// bindScript is the shell commands that bind-mount each source of binds
// on its target, in a stable order, each followed by " && ".
func bindScript(binds map[string]string) string {
	targets := slices.Sorted(maps.Keys(binds))
	var b strings.Builder
	for _, t := range targets {
		fmt.Fprintf(&b, "mount --bind %s %s && ", shellQuote(binds[t]), shellQuote(t))
	}
	return b.String()
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// exposeOn relays host (an address of the host's namespace; port 0 picks
// one) to 127.0.0.1:port inside the process's namespace, and returns the
// address it listens on.
func (np *netnsProcess) exposeOn(host string, port int) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("%s: listen for its port %d: %w", np.name, port, err)
	}
	target := "127.0.0.1:" + strconv.Itoa(port)
	np.addRelay(l, func() (net.Conn, error) {
		var c net.Conn
		err := inNetNS(np.nsPath, func() error {
			var err error
			c, err = net.Dial("tcp", target)
			return err
		})
		return c, err
	})
	return l.Addr().String(), nil
}

// addRelay accepts on l until it is closed and copies each connection
// both ways to one dial opens.
func (np *netnsProcess) addRelay(l net.Listener, dial func() (net.Conn, error)) {
	np.mu.Lock()
	np.relays = append(np.relays, l)
	np.mu.Unlock()
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return // closed
			}
			go func() {
				out, err := dial()
				if err != nil {
					_ = in.Close() // the peer sees the refusal
					return
				}
				pipe(in, out)
			}()
		}
	}()
}

// pipe copies a and b into each other until both directions end.
func pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	half := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src) // ends with either side; nothing to report
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite() // pass the EOF on
		}
	}
	wg.Add(2)
	go half(a, b)
	go half(b, a)
	wg.Wait()
	_ = a.Close() // both directions ended
	_ = b.Close()
}

func (np *netnsProcess) closeRelays() {
	np.mu.Lock()
	defer np.mu.Unlock()
	for _, l := range np.relays {
		_ = l.Close() // stops its accept loop
	}
	np.relays = nil
}

// inNetNS runs f on an OS thread that has joined the network namespace at
// nsPath: sockets f creates belong to that namespace for their whole life.
// The thread returns to this process's namespace afterwards; if it cannot,
// it is left locked and ends with its goroutine.
func inNetNS(nsPath string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open own network namespace: %w", err)
			return
		}
		defer self.Close() // a namespace handle
		target, err := os.Open(nsPath)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open %s: %w", nsPath, err)
			return
		}
		defer target.Close() // a namespace handle
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("join %s: %w", nsPath, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("return from %s: %w", nsPath, err))
			return // the thread stays locked and ends with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// loopbackUp sets the flag IFF_UP on lo of the calling thread's namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd) // an ioctl handle
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read lo's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	return nil
}

// canNetNS reports whether this process may create network namespaces.
func canNetNS() error {
	if os.Geteuid() != 0 {
		return errNoNetNS
	}
	if _, err := exec.LookPath("/bin/sh"); err != nil {
		return fmt.Errorf("%w: %w", errNoNetNS, err)
	}
	return nil
}

// linkToHost links the network namespace of process pid to the host's
// with a veth pair (its host end named after pid, the namespace's eth0),
// a /30 of 10.254.0.0/16 derived from pid, and a default route in the
// namespace via the host end, whose address it returns: the address a
// program in the namespace reaches the host at (cdi-controller, the
// simulated pods' metrics). The pair goes with the namespace.
func linkToHost(pid int) (string, error) {
	a, b := (pid>>6)&0xff, (pid&0x3f)<<2
	host := fmt.Sprintf("10.254.%d.%d", a, b+1)
	inner := fmt.Sprintf("10.254.%d.%d", a, b+2)
	name := "rfbcdi" + strconv.Itoa(pid%10000000)
	ns := "--net=/proc/" + strconv.Itoa(pid) + "/ns/net"
	for _, argv := range [][]string{
		{"ip", "link", "add", name, "type", "veth", "peer", "name", "eth0", "netns", strconv.Itoa(pid)},
		{"ip", "addr", "add", host + "/30", "dev", name},
		{"ip", "link", "set", name, "up"},
		{"nsenter", ns, "ip", "addr", "add", inner + "/30", "dev", "eth0"},
		{"nsenter", ns, "ip", "link", "set", "eth0", "up"},
		{"nsenter", ns, "ip", "route", "add", "default", "via", host},
	} {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("link namespace of pid %d to the host: %s: %w: %s", pid, strings.Join(argv, " "), err, out)
		}
	}
	return host, nil
}
