package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// The environment variables that set --log-format and --log-level when
// the flag is not given.
const (
	logFormatEnv = "REDFISH_BRIDGE_LOG_FORMAT"
	logLevelEnv  = "REDFISH_BRIDGE_LOG_LEVEL"
)

const (
	logFormatUsage = "auto (text on a terminal, else JSON), text or json; env " + logFormatEnv
	logLevelUsage  = "debug, info (default), warn or error; env " + logLevelEnv
)

// logOptions are the global logging flags.
type logOptions struct{ format, level string }

// logFlags takes --log-format and --log-level (or one dash; "=value" or
// the next argument) out of args wherever they stand before "--", the way
// kubectl's global flags do; a flag not given takes its environment
// variable.
func logFlags(args []string, lookupEnv func(string) (string, bool)) (rest []string, o logOptions, err error) {
	o.format, _ = lookupEnv(logFormatEnv)
	o.level, _ = lookupEnv(logLevelEnv)
	dest := map[string]*string{"log-format": &o.format, "log-level": &o.level}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		p, ok := dest[name]
		if !strings.HasPrefix(a, "-") || !ok {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return nil, o, fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		*p = value
	}
	return rest, o, nil
}

// newLogger logs to w as o says: text for a human, JSON for a log
// collector (auto: text when w is a terminal), from o.level up.
func newLogger(o logOptions, w io.Writer, terminal bool) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if o.level != "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(o.level)); err != nil {
			return nil, fmt.Errorf("--log-level %q: want %s", o.level, logLevelUsage)
		}
		opts.Level = level
	}
	text := terminal
	switch o.format {
	case "", "auto":
	case "text":
		text = true
	case "json":
		text = false
	default:
		return nil, fmt.Errorf("--log-format %q: want %s", o.format, logFormatUsage)
	}
	if text {
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return slog.New(slog.NewJSONHandler(w, opts)), nil
}
