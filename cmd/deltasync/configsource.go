package main

import (
	"errors"
	"strings"
)

// A configuration problem is reported where the user wrote the value: a
// key in the config file ("deltasync.yaml: catalog.tokenfile: unknown key"),
// a flag ("--mode \"bogus\": want sync or warn") or an environment variable
// ("DELTASYNC_SHARD \"3/3\": ..."). validate only knows config keys, so
// nameSources renames the key of a problem whose value came from a flag or
// the environment.

// flagKeys maps a flag to the config key it sets, as validate names it.
var flagKeys = []struct{ flag, key string }{
	{"catalog-url", "catalog.url"},
	{"token-file", "catalog.token_file"},
	{"include", "tables[0].include"},
	{"include", "tables[0]"},
	{"shard", "shard"},
	{"listen", "listen"},
	{"schedule", "schedule"},
	{"log-format", "log.format"},
	{"log-level", "log.level"},
	{"credentials", "credentials"},
	{"concurrency", "concurrency"},
	{"heartbeat-url", "heartbeat_url"},
	{"http-token-file", "http.token_file"},
	{"pushgateway-url", "pushgateway.url"},
	{"allow-location", "storage.allowed_locations"},
	{"max-cycle-duration", "max_cycle_duration"},
}

// flagOrEnv names where a flag's value came from: --name, or DELTASYNC_NAME
// when it was read from the environment.
func flagOrEnv(flag string, fromEnv map[string]bool) string {
	if fromEnv[flag] {
		return envName(flag)
	}
	return "--" + flag
}

// nameSources rewrites each problem whose leading config key was set by a
// flag (changed) or the environment (fromEnv) to name that flag or variable.
func nameSources(err error, changed func(string) bool, fromEnv map[string]bool) error {
	var out []error
	for _, line := range splitErrors(err) {
		for _, fk := range flagKeys {
			if !changed(fk.flag) {
				continue
			}
			rest, ok := strings.CutPrefix(line, fk.key)
			if ok && (strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, " ")) {
				line = flagOrEnv(fk.flag, fromEnv) + rest
				break
			}
		}
		out = append(out, errors.New(line))
	}
	return errors.Join(out...)
}

// inFile prefixes every problem found in a config file with the file's
// name, so each line says where to look.
func inFile(name string, err error) error {
	var out []error
	for _, line := range splitErrors(err) {
		out = append(out, errors.New(name+": "+line))
	}
	return errors.Join(out...)
}
