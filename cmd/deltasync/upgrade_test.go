package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/internal/testenv"
)

// After the allow-list arrived, deployments whose tables live outside it
// kept "running" with exit 2 as the only sign. The refusal must be said
// in one sentence naming the setting.
func TestRefusedLocationsSaidLoudly(t *testing.T) {
	tc := newTestCatalog(t)
	dirA := tc.register("basic_partitioned", "a")
	tc.register("basic_partitioned", "b")
	base := []string{"plan", "--catalog-url", tc.srv.URL(), "--log-level", "error"}

	t.Run("every selected table", func(t *testing.T) {
		code, out, errOut := runCLI(t, nil, append(base, "--include", "cat.s.*", "--allow-location", "s3://lake/**")...)
		want := "deltasync: WARNING: every selected table (2, e.g. cat.s.a) was refused because its storage location is " +
			"outside storage.allowed_locations (allowed now: s3://lake/**): add the tables' locations there or with --allow-location\n"
		if code != 2 || errOut != want {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and:\n%s\nstdout:\n%s", code, errOut, want, out)
		}
	})
	t.Run("default allow-list", func(t *testing.T) {
		_, _, errOut := runCLI(t, nil, append(base, "--include", "cat.s.a")...)
		if !strings.Contains(errOut, "every selected table (1, e.g. cat.s.a) was refused") ||
			!strings.Contains(errOut, "(allowed now: s3://*/**, gs://*/**, azblob://*/**, abfss://*/**)") {
			t.Errorf("stderr:\n%s", errOut)
		}
	})
	t.Run("every table of one rule", func(t *testing.T) {
		cfg := writeFile(t, t.TempDir(), "c.yaml", "tables:\n  - include: [cat.s.a]\n  - include: [cat.s.b]\n    mode: warn\n")
		allowA := "file://" + filepath.ToSlash(dirA) + "/**"
		code, _, errOut := runCLI(t, nil, append(base, "--config", cfg, "--allow-location", allowA)...)
		want := "deltasync: WARNING: every table of " + cfg + ": tables[1] (include 'cat.s.b') (1, e.g. cat.s.b) was refused " +
			"because its storage location is outside storage.allowed_locations (allowed now: " + allowA +
			"): add the tables' locations there or with --allow-location\n"
		if code != 2 || errOut != want {
			t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
		}
	})
	t.Run("nothing refused", func(t *testing.T) {
		code, _, errOut := runCLI(t, nil, append(base, "--include", "cat.s.*", "--allow-location", allowTemp())...)
		if code != 0 || errOut != "" {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
}

// The daemon says the same in its log, every cycle.
func TestRunLogsRefusedLocations(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"run", "--catalog-url", tc.srv.URL(), "--include", "cat.s.*", "--listen", testenv.FreeAddr(t),
			"--allow-location", "s3://lake/**", "--schedule", "@every 1s", "--log-level", "warn", "--log-format", "json"}, nil, &stderr, &stderr)
	}()
	want := "every selected table (1, e.g. cat.s.a) was refused because its storage location is outside storage.allowed_locations"
	for i := 0; i < 200 && !strings.Contains(stderr.String(), want); i++ {
		time.Sleep(50 * time.Millisecond) // bounded poll for the first cycle
	}
	cancel()
	<-done
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("daemon log lacks %q:\n%s", want, stderr.String())
	}
}

// Users write `include: main.sales.*`; it means a one-element list.
func TestIncludeAsString(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		yaml    string
		want    []string
		wantErr string
	}{
		{yaml: "tables:\n  - include: main.sales.*\n", want: []string{"main.sales.*"}},
		{yaml: "tables:\n  - include: [main.sales.*, main.ops.*]\n", want: []string{"main.sales.*", "main.ops.*"}},
		{yaml: "tables:\n  - include: 3\n", wantErr: "tables[0].include: want a list, got number"},
		{yaml: "tables:\n  - include: {a: b}\n", wantErr: "tables[0].include: want a list, got object"},
		{yaml: "tables:\n  - include: [3]\n", wantErr: "tables[0].include: want a string, got number"},
	} {
		var cfg config
		err := decodeConfigYAML([]byte(tc.yaml), nil, &cfg)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(cfg.Tables) != 1 || strings.Join(cfg.Tables[0].Include, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: %v, tables %+v, want include %q", tc.yaml, err, cfg.Tables, tc.want)
		}
	}
	// And check-config accepts it end to end.
	cfgPath := writeFile(t, dir, "c.yaml", "catalog: {url: \"http://c/api/2.1/unity-catalog\"}\ntables:\n  - include: main.sales.*\n    mode: warn\n")
	if code, _, errOut := runCLI(t, nil, "check-config", "--config", cfgPath); code != 0 {
		t.Errorf("check-config with include as a string: exit %d\n%s", code, errOut)
	}
}
