package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"k8s.io/klog/v2"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// streams is what a command may touch of the process: its output, its
// error stream, the environment, and whether that error stream is a
// terminal (for --log-format=auto).
type streams struct {
	out, err  io.Writer
	lookupEnv func(string) (string, bool)
	terminal  bool
}

// command is one subcommand. Its run returns an error wrapping
// flag.ErrHelp when asked for --help (its flag set printed the usage).
type command struct {
	name, summary string
	run           func(ctx context.Context, s streams, args []string) error
}

// What each command does, also the first line of its --help.
const (
	serveSummary  = "serve Redfish for the VMs of a cluster"
	importSummary = "download an image into a volume (entrypoint of import pods)"
	fieldsSummary = "show who owns what on a VM and the objects the bridge made for it, checked against the ownership table"
	cacheSummary  = "prune the image cache: delete its entries (PVCs redfish-image-<key>) no import is reading"
)

var commands = []command{
	{"serve", serveSummary, runServe},
	{"import", importSummary, runImport},
	{"fields", fieldsSummary, runFields},
	{"cache", cacheSummary, runCache},
}

// run is the whole program but for the process: it returns the exit code.
// 0: done or help shown; 1: the command failed (logged) or the command
// line was wrong (said on the error stream).
func run(ctx context.Context, argv []string, s streams) int {
	args := argv[1:]
	if filepath.Base(argv[0]) == pluginName {
		args = append([]string{"fields"}, args...)
	}
	args, lf, err := logFlags(args, s.lookupEnv)
	if err != nil {
		return usageError(s, err)
	}
	log, err := newLogger(lf, s.err, s.terminal)
	if err != nil {
		return usageError(s, err)
	}
	slog.SetDefault(log)
	klog.SetSlogLogger(log.With("source", "client-go"))
	ctx = logctx.Into(ctx, log)

	if len(args) == 0 {
		printUsage(s.err)
		return 1
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			return run(ctx, []string{argv[0], args[1], "--help"}, s)
		}
		printUsage(s.out)
		return 0
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		err := c.run(ctx, s, args[1:])
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		default:
			log.Error("redfish-bridge "+name+" failed", "err", err)
			return 1
		}
	}
	return usageError(s, fmt.Errorf("unknown command %q", name))
}

// flagSet is a command's flag set: its --help names the command and says
// what it does before the flags. operands, when the command takes any, is
// how its usage line names them (e.g. "NAMESPACE/VM").
func flagSet(name, summary string, s streams, operands ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	use := strings.Join(append([]string{"redfish-bridge", name}, operands...), " ")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "redfish-bridge %s: %s.\n\nUsage:\n  %s [flags]\n\nFlags:\n", name, summary, use)
		fs.PrintDefaults()
	}
	return fs
}

func usageError(s streams, err error) int {
	fmt.Fprintf(s.err, "Error: %v\nRun 'redfish-bridge --help' for usage.\n", err)
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `redfish-bridge serves DMTF Redfish for KubeVirt VirtualMachines.

Usage:
  redfish-bridge [--log-format auto|text|json] [--log-level LEVEL] COMMAND [flags]

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, `
Flags (before or after the command):
  --log-format   %s
  --log-level    %s

Run 'redfish-bridge COMMAND --help' for a command's flags. Linked as
%s on $PATH, the binary is the kubectl plugin 'kubectl redfish-fields'.
`, logFormatUsage, logLevelUsage, pluginName)
}
