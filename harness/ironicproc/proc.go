package ironicproc

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Python is the interpreter Debian's python3-ironic is installed for.
const Python = "/usr/bin/python3"

// Available reports why the host's Ironic cannot run here (nil when it
// can): the ironic package must be importable by [Python].
func Available(ctx context.Context) error {
	if err := Host.Available(ctx); err != nil {
		return fmt.Errorf("python3-ironic not importable by %s (apt-get install python3-ironic): %w", Python, err)
	}
	return nil
}

// Options configure [Start]. Zero durations take the defaults noted.
type Options struct {
	// Dir holds the configuration, the database, http_root and the log.
	Dir string
	// Release is the Ironic to run; the zero value is [Host].
	Release Release
	// SyncPowerInterval is how often the conductor reads every node's power
	// state (sync_power_state_interval; default 60 s, Ironic's).
	SyncPowerInterval time.Duration
	// CheckProvisionInterval is how often it looks for callback timeouts
	// (check_provision_state_interval; default 60 s).
	CheckProvisionInterval time.Duration
	// CallbackTimeout bounds deploy and clean waits for an agent
	// (deploy_callback_timeout, clean_callback_timeout; default 1800 s).
	CallbackTimeout time.Duration
	// DefaultBIOSInterface is the bios interface of nodes created without
	// one (default_bios_interface): "redfish" makes the conductor cache
	// the System's Bios attributes with their AttributeRegistry when it
	// manages or cleans a node, which metal3's baremetal-operator (whose
	// redfish nodes name none) shows as HostFirmwareSettings; "" is
	// no-bios. Both are enabled either way.
	DefaultBIOSInterface string
	// VMediaInsertPolling turns on Ironic 39's `[redfish]
	// enable_vmedia_insert_polling` (its operators' setting; Ironic's
	// default is off): after each InsertMedia the conductor reads the
	// slot every 2 s until it reads Inserted, failing the step after 60 s.
	VMediaInsertPolling bool
	// ImageTLS, when set, also serves http_root over HTTPS with this
	// certificate, at [Ironic.HTTPSURL] (an image server with a private
	// CA, as operators run Ironic's http_url); http_url stays HTTP.
	ImageTLS *tls.Config
	// WebserverCAs is a PEM bundle Ironic trusts when it reads image URLs
	// over HTTPS itself (`[DEFAULT] webserver_verify_ca`, written to a
	// file under Dir): its HEAD of a boot ISO, the images its vmedia API
	// downloads. Empty leaves Ironic's default (the system roots).
	WebserverCAs string
}

// Ironic is a running all-in-one Ironic.
type Ironic struct {
	// URL is the API endpoint, e.g. http://127.0.0.1:40123.
	URL string
	// HTTPRoot is the conductor's http_root, served at HTTPURL (and at
	// HTTPSURL with [Options.ImageTLS]).
	HTTPRoot, HTTPURL, HTTPSURL string
	log                         string
	cmd                         *exec.Cmd
	done                        chan struct{}
	files, tlsFiles             *http.Server
}

// Start creates the database, starts the HTTP server for http_root and the
// all-in-one service, and waits (bounded by ctx) until the API answers.
func Start(ctx context.Context, o Options) (ir *Ironic, err error) {
	rel := o.Release
	if rel.Name == "" {
		rel = Host
	}
	root := filepath.Join(o.Dir, "httproot")
	for _, d := range []string{root, filepath.Join(o.Dir, "locks"), filepath.Join(o.Dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("ironic dir: %w", err)
		}
	}
	filesLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("http_root listener: %w", err)
	}
	ir = &Ironic{
		HTTPRoot: root, HTTPURL: "http://" + filesLn.Addr().String(),
		log:   filepath.Join(o.Dir, "ironic.log"),
		done:  make(chan struct{}),
		files: &http.Server{Handler: http.FileServer(http.Dir(root)), ReadHeaderTimeout: 10 * time.Second},
	}
	go func() { _ = ir.files.Serve(filesLn) }()
	defer func() {
		if err != nil {
			err = errors.Join(err, ir.Stop())
		}
	}()
	if err := ir.serveTLS(o); err != nil {
		return ir, err
	}
	apiAddr, err := freeAddr()
	if err != nil {
		return ir, err
	}
	ir.URL = "http://" + apiAddr
	// Ironic sees o.Dir as inside, which is chrootDir in a chroot.
	inside, bound := o.Dir, ""
	if rel.Root != "" {
		inside, bound = chrootDir, o.Dir
	}
	if o.WebserverCAs != "" {
		if err := os.WriteFile(filepath.Join(o.Dir, webserverCAFile), []byte(o.WebserverCAs), 0o644); err != nil {
			return ir, fmt.Errorf("write %s: %w", webserverCAFile, err)
		}
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "ironic.conf"), []byte(config(o, inside, apiAddr, ir.HTTPURL)), 0o600); err != nil {
		return ir, fmt.Errorf("write ironic.conf: %w", err)
	}
	conf := filepath.Join(inside, "ironic.conf")
	name, args := rel.python(bound, "-c", launcher(rel.Package+".dbsync"), "--config-file", conf, "create_schema")
	sync := exec.CommandContext(ctx, name, args...) // fixed arguments
	sync.Env = environ()
	if out, err := sync.CombinedOutput(); err != nil {
		return ir, fmt.Errorf("ironic-dbsync create_schema: %w: %s", err, tailBytes(out, 4000))
	}
	// WAL: readers (API polls, power sync) no longer block the writer;
	// with the default rollback journal, eventlet greenthreads waiting on
	// sqlite's lock stalled the whole process for tens of seconds.
	wal := exec.CommandContext(ctx, Python, "-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode=WAL')", filepath.Join(o.Dir, "ironic.sqlite")) // fixed arguments
	if out, err := wal.CombinedOutput(); err != nil {
		return ir, fmt.Errorf("sqlite WAL mode: %w: %s", err, out)
	}
	f, err := os.Create(ir.log)
	if err != nil {
		return ir, fmt.Errorf("ironic log: %w", err)
	}
	name, args = rel.python(bound, "-c", launcher(rel.Package+".singleprocess"), "--config-file", conf)
	ir.cmd = exec.Command(name, args...) // fixed arguments; ended by Stop
	ir.cmd.Env = environ()
	ir.cmd.Stdout, ir.cmd.Stderr = f, f
	ir.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ir.cmd.Start(); err != nil {
		_ = f.Close()
		ir.cmd = nil
		return ir, fmt.Errorf("start ironic: %w", err)
	}
	go func() {
		_ = ir.cmd.Wait()
		_ = f.Close()
		close(ir.done)
	}()
	return ir, ir.waitServing(ctx)
}

// webserverCAFile is the file under Options.Dir that holds
// Options.WebserverCAs.
const webserverCAFile = "webserver-ca.pem"

// serveTLS serves http_root over HTTPS at ir.HTTPSURL when o.ImageTLS is
// set.
func (ir *Ironic) serveTLS(o Options) error {
	if o.ImageTLS == nil {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("https http_root listener: %w", err)
	}
	ir.HTTPSURL = "https://" + ln.Addr().String()
	ir.tlsFiles = &http.Server{
		Handler: http.FileServer(http.Dir(ir.HTTPRoot)), ReadHeaderTimeout: 10 * time.Second, TLSConfig: o.ImageTLS,
		// A client refusing the private CA is what the tests provoke.
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError),
	}
	go func() { _ = ir.tlsFiles.ServeTLS(ln, "", "") }()
	return nil
}

// launcher is the Python that runs an entry point of python3-ironic (the
// Debian package ships the modules, not the console scripts).
func launcher(module string) string {
	return "import sys; from " + module + " import main; sys.argv[0] = '" + module + "'; sys.exit(main())"
}

// environ is os.Environ without REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE:
// python-requests lets them override sushy's verify=False.
func environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REQUESTS_CA_BUNDLE=") && !strings.HasPrefix(kv, "CURL_CA_BUNDLE=") {
			out = append(out, kv)
		}
	}
	return out
}

func (ir *Ironic) waitServing(ctx context.Context) error {
	hc := &http.Client{Timeout: 5 * time.Second}
	var last string // what the last poll got
	for {
		select {
		case <-ir.done:
			return fmt.Errorf("ironic exited before serving: %s", ir.LogTail(40, ""))
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ir.URL+"/v1", nil)
		if err != nil {
			return fmt.Errorf("wait for ironic: %w", err)
		}
		if resp, err := hc.Do(req); err != nil {
			last = err.Error()
		} else {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for ironic at %s: %w; last: %s\n%s", ir.URL, ctx.Err(), last, ir.LogTail(40, ""))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Stop ends Ironic's process group (SIGTERM, then SIGKILL after 10 s) and
// the http_root server. Stopping twice does nothing.
func (ir *Ironic) Stop() error {
	var errs []error
	for _, srv := range []*http.Server{ir.files, ir.tlsFiles} {
		if srv != nil {
			errs = append(errs, srv.Close())
		}
	}
	if ir.cmd == nil {
		return errors.Join(errs...)
	}
	pgid := ir.cmd.Process.Pid
	select {
	case <-ir.done:
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // leftovers of an exited leader
		return errors.Join(errs...)
	default:
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-ir.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-ir.done:
		case <-time.After(10 * time.Second):
			errs = append(errs, fmt.Errorf("ironic process group %d still there 10s after SIGKILL", pgid))
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return errors.Join(errs...)
}

// LogTail is the last n lines of Ironic's log that contain filter (every
// line when filter is empty).
func (ir *Ironic) LogTail(n int, filter string) string { return TailFile(ir.log, "ironic", n, filter) }

// TailFile is the last n lines of the log file at path that contain
// filter (every line when filter is empty); what names the log in the
// answer when the file cannot be read.
func TailFile(path, what string, n int, filter string) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no " + what + " log: " + err.Error() + ")"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if line := sc.Text(); filter == "" || strings.Contains(line, filter) {
			lines = append(lines, line)
			if len(lines) > 2*n {
				lines = lines[len(lines)-n:]
			}
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
