package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// runCLI runs the program with argv and env, stderr a terminal or not.
func runCLI(t *testing.T, terminal bool, env map[string]string, argv ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(t.Context(), append([]string{"redfish-bridge"}, argv...), streams{
		out: &out, err: &errOut, terminal: terminal,
		lookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	return code, out.String(), errOut.String()
}

func TestHelp(t *testing.T) {
	for _, argv := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errOut := runCLI(t, false, nil, argv...)
		if code != 0 || errOut != "" {
			t.Errorf("%q: exit %d, stderr %q; want 0 and nothing", argv, code, errOut)
		}
		for _, c := range commands {
			if !strings.Contains(out, "  "+c.name+" ") {
				t.Errorf("%q: usage does not list %s:\n%s", argv, c.name, out)
			}
		}
	}
	for _, c := range commands {
		for _, argv := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			code, out, errOut := runCLI(t, false, nil, argv...)
			if code != 0 {
				t.Errorf("%q: exit %d, want 0", argv, code)
			}
			if strings.Contains(errOut, `"level"`) || strings.Contains(errOut, "failed") {
				t.Errorf("%q: an error was logged:\n%s", argv, errOut)
			}
			if !strings.Contains(out+errOut, "-kubeconfig") && !strings.Contains(out+errOut, "-listen") && !strings.Contains(out+errOut, "-url") {
				t.Errorf("%q: no flags in the help:\n%s%s", argv, out, errOut)
			}
			// Every command's help names it and says what it does, then its
			// usage line (not Go's bare "Usage of import:").
			head := "redfish-bridge " + c.name + ": " + c.summary + ".\n\nUsage:\n  redfish-bridge " + c.name + " "
			if !strings.HasPrefix(out+errOut, head) || strings.Contains(out+errOut, "Usage of") {
				t.Errorf("%q: help does not start with %q:\n%s%s", argv, head, out, errOut)
			}
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{nil, "Usage:"},
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"--log-format", "yaml", "serve"}, `--log-format "yaml"`},
		{[]string{"serve", "--log-format"}, "--log-format needs a value"},
		{[]string{"--log-level=loud", "serve"}, `--log-level "loud"`},
	} {
		code, _, errOut := runCLI(t, false, nil, tc.argv...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and %q", tc.argv, code, errOut, tc.want)
		}
	}
}

// TestLogFormat: a failing command logs its error as text on a terminal
// and as JSON otherwise; --log-format (anywhere) beats the environment,
// which beats auto.
func TestLogFormat(t *testing.T) {
	const envName = "REDFISH_BRIDGE_LOG_FORMAT"
	for _, tc := range []struct {
		name     string
		terminal bool
		env      map[string]string
		argv     []string
		wantJSON bool
	}{
		{"auto on a terminal", true, nil, []string{"fields", "bad"}, false},
		{"auto elsewhere", false, nil, []string{"fields", "bad"}, true},
		{"explicit auto", true, nil, []string{"--log-format=auto", "fields", "bad"}, false},
		{"json flag on a terminal", true, nil, []string{"--log-format=json", "fields", "bad"}, true},
		{"text flag after the command", false, nil, []string{"fields", "bad", "--log-format", "text"}, false},
		{"env", false, map[string]string{envName: "text"}, []string{"fields", "bad"}, false},
		{"flag beats env", true, map[string]string{envName: "text"}, []string{"fields", "-log-format=json", "bad"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.terminal, tc.env, tc.argv...)
			if code != 1 {
				t.Fatalf("exit %d, want 1 (fields with a bad target); stderr:\n%s", code, errOut)
			}
			line := strings.TrimSpace(errOut)
			var rec struct{ Level, Msg, Err string }
			err := json.Unmarshal([]byte(line), &rec)
			switch {
			case tc.wantJSON && (err != nil || rec.Level != "ERROR" || !strings.Contains(rec.Err, "usage")):
				t.Errorf("want one JSON error line, got %q (%v)", line, err)
			case !tc.wantJSON && (err == nil || !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "usage")):
				t.Errorf("want one text error line, got %q", line)
			}
		})
	}
}

// TestLogLevel: --log-level (anywhere) beats $REDFISH_BRIDGE_LOG_LEVEL,
// which beats info.
func TestLogLevel(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want slog.Level
	}{
		{nil, []string{"serve"}, slog.LevelInfo},
		{map[string]string{"REDFISH_BRIDGE_LOG_LEVEL": "debug"}, []string{"serve"}, slog.LevelDebug},
		{map[string]string{"REDFISH_BRIDGE_LOG_LEVEL": "debug"}, []string{"serve", "--log-level", "warn"}, slog.LevelWarn},
		{nil, []string{"-log-level=error", "serve"}, slog.LevelError},
	} {
		rest, o, err := logFlags(tc.args, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if len(rest) != 1 || rest[0] != "serve" {
			t.Errorf("%q: left %q, want [serve]", tc.args, rest)
		}
		log, err := newLogger(o, &bytes.Buffer{}, false)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if !log.Enabled(t.Context(), tc.want) || log.Enabled(t.Context(), tc.want-1) {
			t.Errorf("env %v, args %q: logger not at level %v", tc.env, tc.args, tc.want)
		}
	}
}
