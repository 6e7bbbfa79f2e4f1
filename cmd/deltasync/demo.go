package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/spf13/cobra"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/location"
)

// newDemoCommand runs the whole loop on one machine with no outside service:
// an in-memory Unity Catalog on loopback, sample Delta tables written to a
// temporary directory, drift the way real writers make it, then plan, sync,
// the result and the drift metrics — through the same code path as plan and
// once.
func newDemoCommand(c *cli) *cobra.Command {
	var keep, serve bool
	var catalogURL string
	var driftEvery time.Duration
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole loop on this machine: in-memory catalog, sample tables, drift, plan, sync",
		Long: "demo starts an in-memory Unity Catalog on 127.0.0.1 (or uses --catalog-url), writes sample Delta\n" +
			"tables to a temporary directory, makes them drift, then plans, syncs and plans again.\n\n" +
			"With --serve it stops after the plan and keeps the catalog and tables up instead, prints the\n" +
			"deltasync run command that points at them, and keeps making drift (every --drift-every) for\n" +
			"that daemon to fix live; Ctrl-C stops the catalog and removes the tables.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "deltasync-demo-")
			if err != nil {
				return err
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			if serve {
				return c.demoServe(cmd.Context(), dir, catalogURL, keep, driftEvery)
			}
			return c.demo(cmd.Context(), dir, catalogURL, keep)
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the sample tables' directory (and, with --catalog-url, the demo catalog) afterwards")
	cmd.Flags().StringVar(&catalogURL, "catalog-url", "", "run the story against this Unity Catalog instead of an in-memory one (it creates, and afterwards deletes, a catalog named deltasync_demo_<random>)")
	cmd.Flags().BoolVar(&serve, "serve", false, "keep the demo catalog and tables running for deltasync run (Ctrl-C cleans up)")
	cmd.Flags().DurationVar(&driftEvery, "drift-every", 20*time.Second, "with --serve: how often a writer changes a table again")
	return cmd
}

// demoEnv is the demo's catalog and sample tables after the writers
// moved on: the state plan and sync start from.
type demoEnv struct {
	cat       *demoCatalog
	dir       string
	orders    *demoLog
	customers *demoLog
	// locations are the storage roots deltasync may read: the demo's tables
	// are local, and local paths are read only when listed, as a deployment
	// must list them.
	locations []string
}

// rules are the demo's table rules: the sales tables in sync mode, the
// managed ops table watch-only.
func (d *demoEnv) rules() []tableRule {
	return []tableRule{
		{Include: []string{d.cat.name + ".sales.*"}, Mode: "sync"},
		{Include: []string{d.cat.name + ".ops.*"}, Mode: "warn"},
	}
}

func (c *cli) demo(ctx context.Context, dir, catalogURL string, keep bool) error {
	out := c.stdout
	d, err := c.demoSetup(ctx, dir, catalogURL, keep)
	if err != nil {
		return err
	}
	defer d.cat.close()
	cfg := defaultConfig()
	cfg.Catalog.URL = d.cat.url
	cfg.Tables = d.rules()
	cfg.Log.Level = "error"
	cfg.Storage.AllowedLocations = d.locations
	quiet := &cli{ctx: ctx, stdout: out, stderr: io.Discard, env: c.env}
	s, err := quiet.settings(cfg)
	if err != nil {
		return fmt.Errorf("demo: its own configuration is refused: %w", err)
	}

	fmt.Fprintln(out, "\n4. deltasync plan — what would change (never writes):")
	if _, err := quiet.demoCycle(ctx, s, dryRun); err != nil {
		return err
	}
	fmt.Fprintln(out, "\n5. deltasync once — sync the external tables, flag the rest:")
	a, err := quiet.demoCycle(ctx, s, writeChanges)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\n6. The drift metrics after the sync (from /metrics):")
	if err := writeDemoMetrics(out, a); err != nil {
		return err
	}
	fmt.Fprintln(out, "\n7. deltasync plan — again:")
	if _, err := quiet.demoCycle(ctx, s, dryRun); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nNext: run the daemon against this demo with `deltasync demo --serve` (status page, /metrics, drift fixed live),")
	fmt.Fprintln(out, "or point deltasync at your own catalog (it only reads until you run once or run):")
	fmt.Fprintln(out, "  deltasync plan --catalog-url https://HOST/api/2.1/unity-catalog --token-file ~/.uc-token --include 'main.*.*'")
	return nil
}

// demoSetup opens the demo catalog, writes and registers the sample tables
// and makes them drift (steps 1 to 3). On success the caller closes
// d.cat; on error it is already closed.
func (c *cli) demoSetup(ctx context.Context, dir, catalogURL string, keep bool) (d *demoEnv, err error) {
	out := c.stdout
	cat, err := openDemoCatalog(ctx, dir, catalogURL, keep)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			cat.close()
		}
	}()
	client := cat.client
	if catalogURL == "" {
		fmt.Fprintf(out, "deltasync demo: the whole loop on this machine, no outside service\n\n")
		fmt.Fprintf(out, "1. Started an in-memory Unity Catalog at %s\n", cat.url)
	} else {
		fmt.Fprintf(out, "deltasync demo: the whole loop on this machine, against the catalog at %s\n\n", cat.url)
		fmt.Fprintf(out, "1. Using the Unity Catalog at %s, in a new catalog %s\n", cat.url, cat.name)
	}

	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	orders := catalog.TableName{Catalog: cat.name, Schema: "sales", Table: "orders"}
	customers := catalog.TableName{Catalog: cat.name, Schema: "sales", Table: "customers"}
	events := catalog.TableName{Catalog: cat.name, Schema: "ops", Table: "events"}

	ordersLog, err := writeOrders(filepath.Join(dir, "orders"), start)
	if err != nil {
		return nil, err
	}
	customersLog, err := writeCustomers(filepath.Join(dir, "customers"), start)
	if err != nil {
		return nil, err
	}
	for _, t := range []struct {
		name catalog.TableName
		dir  string
	}{{orders, ordersLog.dir}, {customers, customersLog.dir}} {
		if err := registerDemoTable(ctx, client, t.name, t.dir); err != nil {
			return nil, err
		}
	}
	if err := createManagedDemoTable(ctx, client, events, start); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "2. Wrote three Delta tables under %s and registered them:\n", dir)
	fmt.Fprintf(out, "     %s, %s (EXTERNAL, mode sync) and %s (MANAGED, watch-only)\n", orders, customers, events)

	// Writers move on; someone edits the managed table's record by hand.
	if err := evolveOrders(ordersLog); err != nil {
		return nil, err
	}
	if err := evolveCustomers(customersLog); err != nil {
		return nil, err
	}
	if err := editCatalogRecord(ctx, client, events, "owner.team", "edited-in-the-catalog"); err != nil {
		return nil, err
	}
	fmt.Fprintln(out, "3. The tables moved on the way real writers move them:")
	fmt.Fprintln(out, "     orders: a writer added the column `discount` (schema evolution)")
	fmt.Fprintln(out, "     customers: a writer changed delta.logRetentionDuration and the description")
	fmt.Fprintln(out, "     events: someone edited the catalog record by hand (managed: deltasync only flags)")
	// The managed table lives where the catalog put it (outside dir against
	// a real server): list that root too.
	ti, err := client.GetTable(ctx, events.String())
	if err != nil {
		return nil, err
	}
	locations := []string{"file://" + filepath.ToSlash(dir) + "/**", location.Normalize(ti.StorageLocation)}
	return &demoEnv{cat: cat, dir: dir, orders: ordersLog, customers: customersLog, locations: locations}, nil
}

// demoCycle runs one plan (dryRun) or once (writeChanges) cycle with the
// commands' wiring and prints its report and summary.
func (c *cli) demoCycle(ctx context.Context, s settings, w writes) (*app, error) {
	a, err := c.newApp(s, w, "")
	if err != nil {
		return nil, err
	}
	defer a.rec.Close()
	rep := a.rec.Sync(ctx)
	var buf bytes.Buffer
	if err := writeReport(&buf, rep, "text"); err != nil {
		return nil, err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			fmt.Fprint(c.stdout, "   ", line)
		}
	}
	fmt.Fprintln(c.stdout, "   deltasync:", rep.Summary())
	if rep.Failed() {
		return nil, fmt.Errorf("demo: the cycle failed: %s", rep.Summary())
	}
	return a, nil
}

// writeDemoMetrics prints the per-table status and drift series.
func writeDemoMetrics(w io.Writer, a *app) error {
	families, err := a.registry.Gather()
	if err != nil {
		return err
	}
	var lines []string
	for _, mf := range families {
		switch mf.GetName() {
		case "deltasync_table_info", "deltasync_table_drift", "deltasync_syncs_total":
		default:
			continue
		}
		var buf bytes.Buffer
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			return err
		}
		for _, l := range strings.Split(buf.String(), "\n") {
			if l == "" || strings.HasPrefix(l, "#") || strings.HasSuffix(l, " 0") {
				continue
			}
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, "  ", l)
	}
	return nil
}

// registerDemoTable loads a sample table's log and registers it as an
// EXTERNAL table, the way an operator would onboard an existing table.
func registerDemoTable(ctx context.Context, client *uc.Client, name catalog.TableName, dir string) error {
	tbl, err := deltalog.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer tbl.Close()
	snap, err := tbl.Load(ctx, deltalog.LoadOptions{})
	if err != nil {
		return err
	}
	_, err = sync.Register(ctx, uc.NewKind(client, uc.KindOptions{}), snap, name, "file://"+filepath.ToSlash(dir))
	return err
}

func writeOrders(dir string, start time.Time) (*demoLog, error) {
	l, err := newDemoLog(dir, start)
	if err != nil {
		return nil, err
	}
	ts := start.UnixMilli()
	err = l.create(deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, deltalog.Metadata{
		ID: "2f1c4a8e-3b7d-4e59-9c0a-5d6e7f8a9b01", Description: "One row per customer order",
		SchemaString:     demoSchema(col("order_id", "long"), col("amount", "decimal(10,2)"), col("country", "string"), col("ordered_at", "timestamp")),
		PartitionColumns: []string{"country"},
		Configuration:    map[string]string{"delta.appendOnly": "false"},
	})
	if err == nil {
		err = l.commit("WRITE", addFile("country=NL/part-0000.parquet", map[string]string{"country": "NL"}, ts),
			addFile("country=DE/part-0001.parquet", map[string]string{"country": "DE"}, ts))
	}
	return l, err
}

func evolveOrders(l *demoLog) error {
	meta := l.meta
	meta.SchemaString = demoSchema(col("order_id", "long"), col("amount", "decimal(10,2)"), col("country", "string"),
		col("ordered_at", "timestamp"), col("discount", "double"))
	return l.changeMetadata("WRITE", meta,
		addFile("country=FR/part-0002.parquet", map[string]string{"country": "FR"}, l.clock.UnixMilli()))
}

func writeCustomers(dir string, start time.Time) (*demoLog, error) {
	l, err := newDemoLog(dir, start)
	if err != nil {
		return nil, err
	}
	err = l.create(deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, deltalog.Metadata{
		ID: "7a9d2c11-0e4f-4b6a-8d3c-2b1a0f9e8d7c", Description: "Customers",
		SchemaString:  demoSchema(col("customer_id", "long"), col("name", "string"), col("email", "string")),
		Configuration: map[string]string{"delta.logRetentionDuration": "interval 30 days"},
	})
	if err == nil {
		err = l.commit("WRITE", addFile("part-0000.parquet", nil, start.UnixMilli()))
	}
	return l, err
}

func evolveCustomers(l *demoLog) error {
	meta := l.meta
	meta.Configuration = map[string]string{"delta.logRetentionDuration": "interval 90 days"}
	meta.Description = "Customers, one row per account"
	return l.changeMetadata("SET TBLPROPERTIES", meta)
}

// createManagedDemoTable creates a catalog-managed table the way an engine
// does: a staging table, the first commit at the staged location, then
// createTable with the catalog-managed protocol and properties.
func createManagedDemoTable(ctx context.Context, client *uc.Client, name catalog.TableName, start time.Time) error {
	staging, err := client.CreateStagingTable(ctx, name.Catalog, name.Schema, name.Table)
	if err != nil {
		return err
	}
	// Like an engine, take the protocol and properties the catalog requires.
	req := staging.RequiredProtocol
	props := map[string]string{}
	for k, v := range staging.RequiredProperties {
		if v != nil {
			props[k] = *v
		}
	}
	schema := demoSchema(col("event_id", "long"), col("kind", "string"), col("at", "timestamp"))
	l, err := newDemoLog(strings.TrimPrefix(staging.Location, "file://"), start)
	if err != nil {
		return err
	}
	err = l.create(deltalog.Protocol{MinReaderVersion: req.MinReaderVersion, MinWriterVersion: req.MinWriterVersion,
		ReaderFeatures: req.ReaderFeatures, WriterFeatures: req.WriterFeatures},
		deltalog.Metadata{ID: staging.TableID, Description: "Operational events", SchemaString: schema, Configuration: props})
	if err != nil {
		return err
	}
	cols, err := catalog.ColumnsFromSchemaString(schema)
	if err != nil {
		return err
	}
	_, err = client.CreateTable(ctx, name.Catalog, name.Schema, uc.CreateTableRequest{
		Name: name.Table, Location: staging.Location, TableType: uc.TableTypeManaged,
		Comment: l.meta.Description, Columns: cols, PartitionColumns: []string{},
		Protocol: req, Properties: props, LastCommitTimestampMs: l.clock.UnixMilli(),
	})
	return err
}
