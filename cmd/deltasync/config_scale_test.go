package main

import (
	"strings"
	"testing"
	"time"
)

// TestScaleConfigKeys: resync_interval (default 1h, 0 allowed) and
// catalog.max_rps (default 0 = no cap) parse, and negative values are
// reported by name.
func TestScaleConfigKeys(t *testing.T) {
	base := "catalog:\n  url: https://uc.example.com/api/2.1/unity-catalog\n%s\ntables:\n  - include: [\"main.*.*\"]\n"
	parse := func(extra string) (config, error) {
		cfg := defaultConfig()
		if err := parseConfigFile([]byte(strings.Replace(base, "%s", extra, 1)), nil, &cfg); err != nil {
			return cfg, err
		}
		return cfg, cfg.validate()
	}
	cfg, err := parse("")
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(cfg.ResyncInterval) != time.Hour || cfg.Catalog.MaxRPS != 0 {
		t.Errorf("defaults: resync_interval %s, max_rps %v; want 1h, 0", time.Duration(cfg.ResyncInterval), cfg.Catalog.MaxRPS)
	}
	cfg, err = parse("  max_rps: 25.5\nresync_interval: 0s")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ResyncInterval != 0 || cfg.Catalog.MaxRPS != 25.5 {
		t.Errorf("got resync_interval %s, max_rps %v; want 0s, 25.5", time.Duration(cfg.ResyncInterval), cfg.Catalog.MaxRPS)
	}
	_, err = parse("  max_rps: -1\nresync_interval: -5m")
	if err == nil || !strings.Contains(err.Error(), "catalog.max_rps") || !strings.Contains(err.Error(), "resync_interval") {
		t.Errorf("negative values: %v; want both keys named", err)
	}
}
