package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// listFlags take a YAML list as well as a comma-separated string.
var listFlags = map[string]bool{"namespaces": true}

// settle applies, to every flag not given on the command line, its
// environment variable REDFISH_BRIDGE_<NAME> (dashes as underscores), then
// the config file named by the flag configFlag: precedence flag > env >
// file > default. lookupEnv is os.LookupEnv outside tests.
func settle(fs *flag.FlagSet, configFlag string, lookupEnv func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		env := "REDFISH_BRIDGE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := lookupEnv(env); ok {
			if serr := f.Value.Set(v); serr != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, serr)
				return
			}
			given[f.Name] = true
		}
	})
	if err != nil {
		return err
	}
	path := fs.Lookup(configFlag).Value.String()
	if path == "" {
		return nil
	}
	return applyConfigFile(fs, configFlag, path, given)
}

// applyConfigFile sets the flags not in given from the YAML file at path
// (keys are flag names).
func applyConfigFile(fs *flag.FlagSet, configFlag, path string, given map[string]bool) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	for key, v := range doc {
		f := fs.Lookup(key)
		if f == nil || key == configFlag {
			return fmt.Errorf("config file %s: unknown key %q", path, key)
		}
		if given[key] {
			continue
		}
		s, err := configString(key, v)
		if err != nil {
			return fmt.Errorf("config file %s: key %q: %w", path, key, err)
		}
		if err := f.Value.Set(s); err != nil {
			return fmt.Errorf("config file %s: key %q: value %q: %w", path, key, s, err)
		}
	}
	return nil
}

// configString turns a YAML value into the flag's string form.
func configString(key string, v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case nil:
		return "", nil
	case []any:
		if !listFlags[key] {
			return "", fmt.Errorf("a list is not valid here")
		}
		parts := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok || strings.Contains(s, ",") {
				return "", fmt.Errorf("list item %v: want a string without commas", e)
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	default:
		return "", fmt.Errorf("unsupported value of type %T", v)
	}
}
