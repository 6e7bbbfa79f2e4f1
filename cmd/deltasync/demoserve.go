package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"
)

// demoServe is demo --serve: the catalog and sample tables of the demo,
// left drifted and kept running so that deltasync run can be pointed at
// them. It prints the exact run command (with a config file it writes next
// to the tables), keeps a writer changing a table every driftEvery so the
// daemon has drift to fix live, and cleans up when ctx ends (Ctrl-C).
func (c *cli) demoServe(ctx context.Context, dir, catalogURL string, keep bool, driftEvery time.Duration) error {
	if driftEvery <= 0 {
		return fmt.Errorf("--drift-every %s: must be positive", driftEvery)
	}
	out := c.stdout
	d, err := c.demoSetup(ctx, dir, catalogURL, keep)
	if err != nil {
		return err
	}
	defer d.cat.close()
	listen, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "deltasync.yaml")
	if err := writeDemoRunConfig(cfgPath, d.cat.url, d.cat.name, listen, d.locations); err != nil {
		return err
	}
	cfg := defaultConfig()
	if err := parseConfigFile(mustRead(cfgPath), c.env, &cfg); err != nil {
		return fmt.Errorf("demo: the config it wrote does not parse: %w", err)
	}
	cfg.Log.Level = "error"
	quiet := &cli{ctx: ctx, stdout: out, stderr: io.Discard, env: c.env}
	s, err := quiet.settings(cfg)
	if err != nil {
		return fmt.Errorf("demo: the config it wrote is refused: %w", err)
	}
	fmt.Fprintln(out, "\n4. deltasync plan — what the daemon will change (never writes):")
	if _, err := quiet.demoCycle(ctx, s, dryRun); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n5. The demo catalog and tables stay up until Ctrl-C. In another terminal run the daemon against them:\n\n")
	fmt.Fprintf(out, "  deltasync run --config %s\n\n", cfgPath)
	fmt.Fprintf(out, "   (deltasync is bin/deltasync after `make build`; or use `go run ./cmd/deltasync run --config %s`)\n", cfgPath)
	fmt.Fprintf(out, "   then open http://%s/ for the status page and http://%s/metrics for the metrics.\n", listen, listen)
	fmt.Fprintf(out, "   Every %s a writer changes a table here; watch the daemon sync it on its next cycle.\n\n", driftEvery)
	if f, ok := out.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}

	tick := time.NewTicker(driftEvery)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "\ndeltasync demo: stopping the catalog and removing the sample tables")
			return nil
		case <-tick.C:
		}
		what, err := d.drift(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s\n", time.Now().Format("15:04:05"), what)
	}
}

// drift makes the n-th live change, alternating between the two EXTERNAL
// tables so each cycle of the daemon has something to fix.
func (d *demoEnv) drift(n int) (string, error) {
	if n%2 == 1 {
		meta := d.customers.meta
		meta.Description = fmt.Sprintf("Customers, one row per account (edit %d)", n)
		if err := d.customers.changeMetadata("SET TBLPROPERTIES", meta); err != nil {
			return "", err
		}
		return fmt.Sprintf("a writer changed %s.sales.customers' description (log version %d)", d.cat.name, d.customers.version), nil
	}
	meta := d.orders.meta
	conf := map[string]string{}
	for k, v := range meta.Configuration {
		conf[k] = v
	}
	conf["demo.batch"] = strconv.Itoa(n)
	meta.Configuration = conf
	if err := d.orders.changeMetadata("SET TBLPROPERTIES", meta); err != nil {
		return "", err
	}
	return fmt.Sprintf("a writer set demo.batch=%d on %s.sales.orders (log version %d)", n, d.cat.name, d.orders.version), nil
}

// writeDemoRunConfig writes the config deltasync run uses against the demo:
// the sales tables in sync mode, the managed ops table watch-only, a short
// schedule and human-readable logs.
func writeDemoRunConfig(path, catalogURL, catalogName, listen string, locations []string) error {
	doc := map[string]any{
		"catalog": map[string]any{"url": catalogURL},
		"storage": map[string]any{"allowed_locations": locations},
		"tables": []map[string]any{
			{"include": []string{catalogName + ".sales.*"}, "mode": "sync"},
			{"include": []string{catalogName + ".ops.*"}, "mode": "warn"},
		},
		"schedule": "@every 10s",
		"jitter":   "1s",
		"listen":   listen,
		"log":      map[string]any{"format": "console", "level": "info"},
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	header := "# Written by deltasync demo --serve: deltasync run against the demo catalog.\n"
	return os.WriteFile(path, append([]byte(header), data...), 0o600)
}

// freeLoopbackAddr picks a free port on 127.0.0.1 for the daemon's HTTP
// server (the status page and /metrics name tables: loopback only).
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func mustRead(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}
