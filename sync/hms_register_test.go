package sync_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/register"
)

// Registration into a Hive Metastore (register rules), against the fake as
// HMS 4 and 3 and the real HMS 4.0.1 and 3.1.3: delta-rs tables under a
// location template are created as Spark registers a Delta EXTERNAL
// table, in sync with their logs, and the next cycle sends nothing.

// ensureDB makes the env's database exist (the fake has none until a
// table is put; the real one was created by newHMSEnv).
func (e *hmsEnv) ensureDB() {
	e.t.Helper()
	if e.fake == nil {
		return
	}
	if err := e.plain.CreateDatabase(context.Background(), e.db, ""); err != nil {
		e.t.Fatal(err)
	}
}

// registering is a reconciler with one register rule and no tables[] rule
// (what it maintains, registration selects).
func (e *hmsEnv) registering(rule register.Rule, mutate ...func(*sync.Options)) *sync.Reconciler {
	e.t.Helper()
	sel, err := sync.NewSelector(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	pol, err := sync.NewStoragePolicy([]string{"file://" + filepath.ToSlash(os.TempDir()) + "/**"}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	o := sync.Options{Catalog: hms.NewKind(e.client, hms.KindOptions{LockWait: 2 * time.Second}), Selector: sel, Concurrency: 2, Storage: pol,
		Register: &register.Options{Rules: []register.Rule{rule}}, ResyncInterval: time.Hour}
	for _, m := range mutate {
		m(&o)
	}
	r, err := sync.New(o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { r.Close() })
	return r
}

// checkRegistered asserts the stored record is Spark's registration of a
// Delta EXTERNAL table at location, holding what the log at dir says.
func checkRegistered(t *testing.T, got *hm.Table, dir, location string) {
	t.Helper()
	if !strings.HasSuffix(got.Sd.Location, "/"+got.TableName+"-__PLACEHOLDER__") || strings.Contains(got.Sd.Location, dir) {
		t.Errorf("%s: sd.location %q, want Spark's <db location>/%s-__PLACEHOLDER__", got.TableName, got.Sd.Location, got.TableName)
	}
	checkRegisteredTrue(t, got, dir, location)
}

// checkRegisteredTrue is checkRegistered but for sd.location (another
// registrar's record keeps its own).
func checkRegisteredTrue(t *testing.T, got *hm.Table, dir, location string) {
	t.Helper()
	snap := snapshot(t, dir)
	p := got.Parameters
	if got.TableType != "EXTERNAL_TABLE" || p["EXTERNAL"] != "TRUE" || p[hms.KeyProvider] != "delta" {
		t.Errorf("%s: type %q EXTERNAL=%q provider %q, want EXTERNAL_TABLE, TRUE, delta", got.TableName, got.TableType, p["EXTERNAL"], p[hms.KeyProvider])
	}
	if got.Sd == nil || got.Sd.SerdeInfo == nil || got.Sd.SerdeInfo.Parameters[hms.SerdePath] != location {
		t.Fatalf("%s: serde path not %q: %+v", got.TableName, location, got.Sd)
	}
	if !hms.IsPlaceholder(got.Sd.Cols) {
		t.Errorf("%s: columns %v, want the placeholder col array<string>", got.TableName, got.Sd.Cols)
	}
	r, err := hms.ReadRecord(got)
	if err != nil {
		t.Fatal(err)
	}
	if !r.HasSchema || r.Schema != snap.Metadata.SchemaString {
		t.Errorf("%s: schema %q, want the log's %q", got.TableName, r.Schema, snap.Metadata.SchemaString)
	}
	if strings.Join(r.PartitionColumns, ",") != strings.Join(snap.Metadata.PartitionColumns, ",") {
		t.Errorf("%s: partition columns %v, want %v", got.TableName, r.PartitionColumns, snap.Metadata.PartitionColumns)
	}
	if r.Version != snap.Version || r.CommitTimestamp != snap.CommitTimestamp {
		t.Errorf("%s: watermark %d/%d, want %d/%d", got.TableName, r.Version, r.CommitTimestamp, snap.Version, snap.CommitTimestamp)
	}
	if r.Comment != snap.Metadata.Description {
		t.Errorf("%s: comment %q, want %q", got.TableName, r.Comment, snap.Metadata.Description)
	}
	if p[hms.KeyMinReaderVersion] != strconv.Itoa(snap.Protocol.MinReaderVersion) || p[hms.KeyMinWriterVersion] != strconv.Itoa(snap.Protocol.MinWriterVersion) {
		t.Errorf("%s: protocol %s/%s, want %d/%d", got.TableName, p[hms.KeyMinReaderVersion], p[hms.KeyMinWriterVersion], snap.Protocol.MinReaderVersion, snap.Protocol.MinWriterVersion)
	}
	for k, v := range snap.Metadata.Configuration {
		if p[k] != v {
			t.Errorf("%s: log property %s = %q, want %q", got.TableName, k, p[k], v)
		}
	}
}

func writes(calls map[string]int) map[string]int {
	out := map[string]int{}
	for op, n := range calls {
		if strings.HasPrefix(op, "create") || strings.HasPrefix(op, "alter") || strings.HasPrefix(op, "drop") {
			out[op] = n
		}
	}
	return out
}

// TestHMSRegister: plan reports would_register and sends nothing; once
// registers every delta-rs table under the template (one create_table
// each, nothing else written), each read back through the Thrift client
// with Spark's markers and the log's state; a fresh process then finds
// them in sync and sends nothing, and a steady cycle reads no table alone.
func TestHMSRegister(t *testing.T) {
	py := deltarsPython(t)
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		e.ensureDB()
		root := filepath.Join(t.TempDir(), "lake")
		registerTable(t, py, filepath.Join(root, e.db, "plain"), "plain")
		registerTable(t, py, filepath.Join(root, e.db, "partitioned"), "partitioned")
		copyLog(t, "table-with-columnmapping-mode-name", filepath.Join(root, e.db, "colmap"), -1)
		if err := os.MkdirAll(filepath.Join(root, e.db, "not_yet", "_delta_log"), 0o755); err != nil {
			t.Fatal(err)
		}
		tables := []string{"colmap", "partitioned", "plain"}
		rule := register.Rule{Location: "file://" + root + "/{schema}/{table}", Name: "hive.{schema}.{table}"}
		ctx := context.Background()
		want := func(o sync.Outcome) map[string]string {
			m := map[string]string{}
			for _, tb := range tables {
				m["hive."+e.db+"."+tb] = string(o)
			}
			return m
		}

		e.takeCalls()
		rep := e.registering(rule, func(o *sync.Options) { o.DryRun = true }).Sync(ctx)
		if got := outcomesOf(rep); !mapsEqual(got, want(sync.OutcomeWouldRegister)) {
			t.Fatalf("plan outcomes = %v, want %v\n%v", got, want(sync.OutcomeWouldRegister), rep.Results)
		}
		if w := writes(e.takeCalls()); len(w) != 0 {
			t.Fatalf("plan wrote %v", w)
		}
		if res := resultOf(t, rep, "hive."+e.db+".plain"); res.Registration == nil || len(res.Registration.Columns) != 4 {
			t.Errorf("plan row: %+v, want the registration with the log's 4 columns", res.Registration)
		}

		rep = e.registering(rule).Sync(ctx)
		if got := outcomesOf(rep); !mapsEqual(got, want(sync.OutcomeRegistered)) {
			t.Fatalf("once outcomes = %v, want %v\n%v", got, want(sync.OutcomeRegistered), rep.Results)
		}
		if rep.Failed() || rep.Drift() {
			t.Errorf("once: failed %v drift %v", rep.Failed(), rep.Drift())
		}
		calls := e.takeCalls()
		if w := writes(calls); len(w) != 1 || w["create_table"] != 3 {
			t.Errorf("once wrote %v, want exactly 3 create_table", w)
		}
		for _, tb := range tables {
			dir := filepath.Join(root, e.db, tb)
			checkRegistered(t, e.stored(tb), dir, "file://"+dir)
		}

		// A fresh process: everything in sync, nothing sent.
		again := e.registering(rule)
		rep = again.Sync(ctx)
		if got := outcomesOf(rep); !mapsEqual(got, want(sync.OutcomeUnchanged)) {
			t.Fatalf("second once outcomes = %v, want unchanged\n%v", got, rep.Results)
		}
		if w := writes(e.takeCalls()); len(w) != 0 {
			t.Errorf("second once wrote %v", w)
		}
		again.Sync(ctx) // verified: the fast path from now on
		e.takeCalls()
		rep = again.Sync(ctx)
		if got := outcomesOf(rep); !mapsEqual(got, want(sync.OutcomeUnchanged)) {
			t.Fatalf("steady outcomes = %v", got)
		}
		calls = e.takeCalls()
		if w := writes(calls); len(w) != 0 || calls["get_table_req"] != 0 || calls["get_database"] != 0 {
			t.Errorf("steady cycle calls %v: want no write and no per-table read", calls)
		}
	})
}

// TestHMSRegisterRefuses: a name taken at another location is a conflict
// and the record stays as it was; a missing database is refused unless
// register.create_schemas, which creates it; the same location taken
// meanwhile under the name (another registrar, between deltasync's read
// and its create) is already_registered, not created twice; a race of two
// processes registers the table once.
func TestHMSRegisterRefuses(t *testing.T) {
	py := deltarsPython(t)
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		e.ensureDB()
		ctx := context.Background()
		root := filepath.Join(t.TempDir(), "lake")
		rule := register.Rule{Location: "file://" + root + "/{schema}/{table}", Name: "hive.{schema}.{table}"}

		// Taken at another location.
		registerTable(t, py, filepath.Join(root, e.db, "taken"), "plain")
		_, other := logTable(t, "deletion_vectors_disabled", "elsewhere", -1)
		e.sparkRegister("taken", other)
		before := e.stored("taken")
		e.takeCalls()
		rep := e.registering(rule).Sync(ctx)
		res := resultOf(t, rep, "hive."+e.db+".taken")
		if res.Outcome != sync.OutcomeFlagged || res.ErrorReason != sync.ReasonConflict || !strings.Contains(res.Reason, other) {
			t.Errorf("taken: %s %s %q, want flagged conflict naming %s", res.Outcome, res.ErrorReason, res.Reason, other)
		}
		if w := writes(e.takeCalls()); w["create_table"] != 0 {
			t.Errorf("taken: wrote %v", w)
		}
		if after := e.stored("taken"); after.Parameters[hms.KeyDDLTime] != before.Parameters[hms.KeyDDLTime] ||
			after.Sd.SerdeInfo.Parameters[hms.SerdePath] != other {
			t.Errorf("taken: the record changed: %v", after.Parameters)
		}

		// A missing database: refused, then created under create_schemas.
		db2 := e.db + "_new"
		if e.fake == nil {
			t.Cleanup(func() { _ = e.plain.DropDatabase(context.Background(), db2, true) })
		}
		dir2 := filepath.Join(root, db2, "fresh")
		registerTable(t, py, dir2, "partitioned")
		rep = e.registering(rule).Sync(ctx)
		res = resultOf(t, rep, "hive."+db2+".fresh")
		if res.Outcome != sync.OutcomeFlagged || res.ErrorReason != sync.ReasonMissingSchema || !strings.Contains(res.Reason, "register.create_schemas") {
			t.Errorf("missing database: %s %s %q, want flagged missing_schema", res.Outcome, res.ErrorReason, res.Reason)
		}
		if w := writes(e.takeCalls()); len(w) != 0 {
			t.Errorf("missing database: wrote %v", w)
		}
		rep = e.registering(rule, func(o *sync.Options) { o.Register.CreateSchemas = true }).Sync(ctx)
		res = resultOf(t, rep, "hive."+db2+".fresh")
		if res.Outcome != sync.OutcomeRegistered || res.Registration == nil || !res.Registration.CreateSchema {
			t.Fatalf("create_schemas: %s %q %+v, want registered with the database created", res.Outcome, res.Reason, res.Registration)
		}
		if w := writes(e.takeCalls()); w["create_database"] != 1 || w["create_table"] != 1 {
			t.Errorf("create_schemas wrote %v, want one create_database and one create_table", w)
		}
		got, err := e.plain.GetTable(ctx, db2, "fresh")
		if err != nil {
			t.Fatal(err)
		}
		checkRegistered(t, got.Thrift, dir2, "file://"+dir2)

		// Another registrar creates the same table at the same location
		// just before deltasync's create.
		dir3 := filepath.Join(root, e.db, "raced")
		registerTable(t, py, dir3, "plain")
		loc3 := "file://" + dir3
		var once gosync.Once
		e.mu.Lock()
		e.afterCall = func(op string) {
			if op != "get_database" {
				return
			}
			once.Do(func() {
				tbl, err := hms.NewExternalTable(e.db, "raced", hms.Desired{Location: loc3, Schema: snapshot(t, dir3).Metadata.SchemaString, Version: 0, CommitTimestamp: 1})
				if err == nil {
					err = e.plain.CreateExternalTable(ctx, tbl)
				}
				if err != nil {
					t.Errorf("the other registrar: %v", err)
				}
			})
		}
		e.mu.Unlock()
		e.takeCalls()
		rep = e.registering(rule).Sync(ctx)
		e.mu.Lock()
		e.afterCall = nil
		e.mu.Unlock()
		res = resultOf(t, rep, "hive."+e.db+".raced")
		if res.Outcome != sync.OutcomeAlreadyRegistered || !strings.Contains(res.Reason, "meanwhile") {
			t.Errorf("raced: %s %q, want already_registered (meanwhile)", res.Outcome, res.Reason)
		}
		if calls := e.takeCalls(); calls["create_table"] != 1 {
			t.Errorf("raced: %d create_table, want the one that found it taken", calls["create_table"])
		}
		// It is maintained (the cycle's listing brings the other
		// registrar's record to the log): the next cycle finds it in sync.
		rep = e.registering(rule).Sync(ctx)
		if res := resultOf(t, rep, "hive."+e.db+".raced"); res.Outcome != sync.OutcomeUnchanged {
			t.Errorf("raced, next cycle: %s %q, want unchanged", res.Outcome, res.Reason)
		}
		checkRegisteredTrue(t, e.stored("raced"), dir3, loc3)

		// Two processes at once: one table, registered once.
		dir4 := filepath.Join(root, e.db, "twice")
		registerTable(t, py, dir4, "plain")
		a, b := e.registering(rule), e.registering(rule)
		e.takeCalls()
		var wg gosync.WaitGroup
		reps := make([]*sync.Report, 2)
		for i, r := range []*sync.Reconciler{a, b} {
			wg.Add(1)
			go func() { defer wg.Done(); reps[i] = r.Sync(ctx) }()
		}
		wg.Wait()
		registered := 0
		for _, rep := range reps {
			switch res := resultOf(t, rep, "hive."+e.db+".twice"); res.Outcome {
			case sync.OutcomeRegistered:
				registered++
			case sync.OutcomeAlreadyRegistered, sync.OutcomeUnchanged:
			default:
				t.Errorf("twice: %s %q", res.Outcome, res.Reason)
			}
		}
		if registered != 1 {
			t.Errorf("two processes registered %d times, want once", registered)
		}
		names, err := e.plain.TableNames(ctx, e.db)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, nm := range names {
			if nm == "twice" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("tables named twice: %d", n)
		}
		checkRegistered(t, e.stored("twice"), dir4, "file://"+dir4)
	})
}

// TestHMSWarnRuleNeverRegisters is TestWarnRuleNeverRegisters on a Hive
// Metastore (the fakes, and the real 4.0.1 and 3.1.3): a register rule's
// template maps a Delta table no record names yet to a name a tables[]
// rule puts in mode warn. Registering is a write, and warn never writes:
// flagged with the registration it would make, no create_table, cycle
// after cycle; the neighbour only the register rule covers is registered.
func TestHMSWarnRuleNeverRegisters(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		e.ensureDB()
		root := filepath.Join(t.TempDir(), "lake")
		for _, table := range []string{"warned", "registered"} {
			copyLog(t, "data-skipping-change-stats-collected-across-versions", filepath.Join(root, e.db, table), -1)
		}
		rule := register.Rule{Location: "file://" + root + "/{schema}/{table}", Name: "hive.{schema}.{table}"}
		warned, registered := "hive."+e.db+".warned", "hive."+e.db+".registered"
		sel, err := sync.NewSelector([]sync.Rule{{Include: []string{warned}, Mode: sync.ModeWarn}})
		if err != nil {
			t.Fatal(err)
		}
		r := e.registering(rule, func(o *sync.Options) { o.Selector = sel })
		ctx := context.Background()
		e.takeCalls()
		for i := range 2 {
			rep := r.Sync(ctx)
			w := resultOf(t, rep, warned)
			if w.Mode != sync.ModeWarn || w.Outcome != sync.OutcomeFlagged || w.Registration == nil || !strings.Contains(w.Reason, "warn") {
				t.Fatalf("cycle %d: %s %+v, want mode warn, flagged, with the registration it would make and why not", i+1, warned, w)
			}
			creates := writes(e.takeCalls())["create_table"]
			if i == 0 {
				if a := resultOf(t, rep, registered); a.Outcome != sync.OutcomeRegistered {
					t.Fatalf("cycle 1: %s %s (%s), want registered", registered, a.Outcome, a.Reason)
				}
				if creates != 1 {
					t.Errorf("cycle 1: %d create_table, want 1 (the registered table's)", creates)
				}
			} else if creates != 0 {
				t.Errorf("cycle %d: %d create_table, want none", i+1, creates)
			}
		}
		if _, err := e.plain.GetTable(ctx, e.db, "warned"); !errors.Is(err, hms.ErrNotFound) {
			t.Errorf("%s in the metastore (%v): a warn rule's table was registered", warned, err)
		}
	})
}
