package sync

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	stdsync "sync"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/plan"
)

// HMSOptions make a Reconciler keep a Hive Metastore's records true to the
// Delta logs (instead of Unity Catalog's): Options.Catalog is then nil.
type HMSOptions struct {
	Client *hms.Client
	// Name is the first part of every table's name, <Name>.<db>.<table>:
	// what the selection rules, metrics and reports see (default "hive").
	Name string
	// Columns is what the HMS columns hold (default hms.ColumnsPlaceholder).
	Columns hms.Columns
	// LockWait bounds the wait for the table lock on HMS 3 (default 10s).
	LockWait time.Duration
}

// DefaultHMSName is HMSOptions.Name's default.
const DefaultHMSName = "hive"

// hmsKind is a Hive Metastore (catalog/hms): databases are the schemas of
// one catalog named HMSOptions.Name. A cycle reads each database's
// selected tables in batches (get_table_objects_by_name_req, ceil(N/100)
// calls for N tables) and plans from those records: an unchanged table
// costs no call of its own. A write is guarded by the record it was
// planned from (hms.Client.WriteFrom); a conflict reloads with
// get_table_req and re-plans, through the reconcile's own loop.
type hmsKind struct {
	r    *Reconciler
	c    *hms.Client
	name string
	cols hms.Columns
	wait time.Duration
}

func newHMSKind(r *Reconciler, o *HMSOptions) *hmsKind {
	name := o.Name
	if name == "" {
		name = DefaultHMSName
	}
	return &hmsKind{r: r, c: o.Client, name: name, cols: o.Columns, wait: o.LockWait}
}

// hmsListed is what a Target of the HMS kind carries from the listing: the
// table as the batch read returned it.
type hmsListed struct{ t *hms.Table }

func (k *hmsKind) discover(ctx context.Context, emit func(Target) bool) ([]Skipped, error) {
	r, sel := k.r, k.r.opts.Selector
	var errs []error
	var skipped []Skipped
	seen := map[string]bool{}
	stop := errors.New("stopped")
	add := func(t Target) bool {
		key := strings.ToLower(t.Name.String())
		if !r.opts.Shard.Owns(t.Name.String()) || seen[key] || r.adopter.registeredNow(t.Name.String()) {
			return true
		}
		seen[key] = true
		return emit(t)
	}
	catalogs, all := sel.Catalogs()
	ac, aall := r.adopter.catalogs()
	catalogs = append(catalogs, ac...)
	if all || aall || slices.ContainsFunc(catalogs, func(c string) bool { return strings.EqualFold(c, k.name) }) {
		err := k.list(ctx, func(t Target, why string) bool {
			if why != "" {
				seen[strings.ToLower(t.Name.String())] = true
				skipped = append(skipped, Skipped{Table: t.Name.String(), Reason: why})
				return true
			}
			return add(t)
		}, stop)
		if errors.Is(err, stop) {
			return sortSkipped(skipped), nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, e := range sel.Explicit() {
		if !strings.EqualFold(e[0], k.name) {
			continue // not this metastore's: reported missing below, as UC does
		}
		n := catalog.TableName{Catalog: k.name, Schema: e[1], Table: e[2]}
		if mode, ok := sel.Match(e[0], e[1], e[2]); ok {
			if !add(Target{Name: n, Mode: mode}) {
				break
			}
		}
	}
	return sortSkipped(skipped), errors.Join(errs...)
}

// list reads every selected table of every database the selector may
// match in batches (readBatches: two in flight) and hands each to emit in
// sorted order (why: it is not Delta).
func (k *hmsKind) list(ctx context.Context, emit func(Target, string) bool, stop error) error {
	sel := k.r.opts.Selector
	dbs, err := k.c.Databases(ctx)
	if err != nil {
		return fmt.Errorf("listing databases of %s: %w", k.name, err)
	}
	var errs []error
	for _, db := range dbs {
		adoptable := k.r.adopter.mayMatchSchema(k.name, db)
		if !sel.MayMatchSchema(k.name, db) && !adoptable {
			continue
		}
		names, err := k.c.TableNames(ctx, db)
		if err != nil {
			if !errors.Is(err, hms.ErrNotFound) {
				errs = append(errs, fmt.Errorf("listing tables of %s.%s: %w", k.name, db, err))
			}
			continue
		}
		sort.Strings(names)
		var want []string
		modes := map[string]Mode{}
		for _, n := range names {
			mode, ok := sel.Match(k.name, db, n)
			if !ok && adoptable {
				// Read to see whether a register rule describes it
				// (its location), below.
				mode, ok = "", true
			}
			if ok && k.r.opts.Shard.Owns(catalog.TableName{Catalog: k.name, Schema: db, Table: n}.String()) {
				want = append(want, n)
				modes[n] = mode
			}
		}
		err = k.readBatches(ctx, db, slices.Collect(slices.Chunk(want, hmsBatch)), func(chunk []string, got map[string]*hms.Table) bool {
			for _, n := range chunk {
				t, ok := got[n]
				if !ok {
					continue // dropped since the listing
				}
				tn := catalog.TableName{Catalog: k.name, Schema: db, Table: n}
				mode := modes[n]
				if mode == "" {
					// A table a register rule describes is kept in
					// sync unless a tables[] rule says otherwise.
					m, ok := k.r.adopter.adoptedMode(tn, listedHMS(k.name, t))
					if !ok {
						continue
					}
					mode = m
				}
				if !hms.IsDelta(t.Thrift) {
					if !emit(Target{Name: tn}, notDeltaHMS(t.Thrift)) {
						return false
					}
					continue
				}
				if !emit(Target{Name: tn, Mode: mode, Listed: listedHMS(k.name, t), native: hmsListed{t}}, "") {
					return false
				}
			}
			return true
		})
		if errors.Is(err, errStopped) {
			return stop
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("reading tables of %s.%s: %w", k.name, db, err))
		}
	}
	return errors.Join(errs...)
}

// hmsBatch is how many tables a cycle reads per call: the client's
// default batch (HMS caps one at metastore.batch.retrieve.max, 300).
const hmsBatch = 100

// hmsReadsInFlight is how many of a database's batch reads the listing
// keeps outstanding. The steady cycle is those reads (the log checks
// overlap them); their cost is per table on the server, not per call, so
// a second read in flight hides one round trip's idle time behind
// another's work, and more are not reliably better (BENCHMARKS.md, "Hive
// Metastore: 10,000 tables" and "Two batch reads in flight": reads alone,
// 2 in flight 25-43% faster than 1; the steady cycle on HMS 4.0.1, 10,000
// tables, 7.17 s to 6.44 s on 2 shared cores; 4 in flight better than 2
// in half the runs, worse in the others).
const hmsReadsInFlight = 2

// errStopped is readBatches' answer when each asked it to stop.
var errStopped = errors.New("stopped")

// readBatches reads db's chunks with up to hmsReadsInFlight reads
// outstanding and hands each chunk's tables to each, in the chunks'
// order, until each returns false (errStopped) or a read fails (its
// error: the chunks before it were handed over, none after). Reads
// still outstanding when it returns are cancelled and waited for.
func (k *hmsKind) readBatches(ctx context.Context, db string, chunks [][]string, each func(chunk []string, got map[string]*hms.Table) bool) error {
	type read struct {
		got map[string]*hms.Table
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg stdsync.WaitGroup
	defer wg.Wait()
	defer cancel()
	reads := make([]chan read, len(chunks))
	next := 0 // the first chunk not yet asked for
	for i, chunk := range chunks {
		// Chunk i and up to hmsReadsInFlight-1 after it are asked
		// for before i's answer is waited for: while each handles
		// chunk i, the reads of the next ones are in flight.
		for ; next < len(chunks) && next < i+hmsReadsInFlight; next++ {
			c, names := make(chan read, 1), chunks[next]
			reads[next] = c
			wg.Go(func() {
				got, err := k.c.GetTables(ctx, db, names)
				c <- read{got, err}
			})
		}
		r := <-reads[i]
		reads[i] = nil
		if r.err != nil {
			return r.err
		}
		if !each(chunk, r.got) {
			return errStopped
		}
	}
	return nil
}

func notDeltaHMS(t *hm.Table) string {
	if p := t.Parameters[hms.KeyProvider]; p != "" {
		return fmt.Sprintf("provider %s is not Delta", p)
	}
	return fmt.Sprintf("table type %s without %s=delta is not a Delta table", t.TableType, hms.KeyProvider)
}

// listedHMS is a batch-read table as a listing entry: what the fast path
// compares between cycles. UpdatedAt is the record's fingerprint (not a
// time): any change to its parameters, serde path or columns changes it,
// whether or not the writer moved transient_lastDdlTime.
func listedHMS(cat string, t *hms.Table) *uc.TableInfo {
	th := t.Thrift
	ti := &uc.TableInfo{Name: th.TableName, CatalogName: cat, SchemaName: th.DbName, TableType: hmsType(th),
		DataSourceFormat: "DELTA", Comment: th.Parameters[hms.KeyComment], UpdatedAt: fingerprint(th)}
	if th.Sd != nil && th.Sd.SerdeInfo != nil {
		ti.StorageLocation = th.Sd.SerdeInfo.Parameters[hms.SerdePath]
	}
	return ti
}

// fingerprint is a non-zero 63-bit FNV-1a of what a reconcile compares
// or writes in t: every parameter, the serde parameters, the columns.
func fingerprint(t *hm.Table) int64 {
	h := fnv.New64a()
	w := func(s string) {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(s)))
		_, _ = h.Write(n[:])
		_, _ = h.Write([]byte(s))
	}
	kv := func(m map[string]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w(k)
			w(m[k])
		}
	}
	kv(t.Parameters)
	w(t.TableType)
	if t.Sd != nil {
		for _, c := range t.Sd.Cols {
			w(c.Name)
			w(c.Type)
			w(c.Comment)
		}
		if t.Sd.SerdeInfo != nil {
			kv(t.Sd.SerdeInfo.Parameters)
		}
	}
	v := int64(h.Sum64() >> 1)
	if v == 0 {
		v = 1
	}
	return v
}

// hmsType is the record's table type as reports show it: EXTERNAL for
// HMS's EXTERNAL_TABLE (Unity Catalog's spelling), else as stored. A
// MANAGED_TABLE is Spark's (its data under the warehouse), not a table
// the metastore ratifies commits of: it is synced like any other.
func hmsType(t *hm.Table) string {
	if t.TableType == "EXTERNAL_TABLE" {
		return uc.TableTypeExternal
	}
	return t.TableType
}

func (k *hmsKind) load(ctx context.Context, t Target, attempt int) (plan.Record, any, error) {
	var tbl *hms.Table
	if l, ok := t.native.(hmsListed); ok && attempt == 1 {
		tbl = l.t
	} else {
		var err error
		if tbl, err = k.c.GetTable(ctx, t.Name.Schema, t.Name.Table); err != nil {
			return plan.Record{}, nil, err
		}
	}
	if !hms.IsDelta(tbl.Thrift) {
		return plan.Record{}, nil, flagged(ReasonUnsupported, fmt.Errorf("not a Delta table: %s", notDeltaHMS(tbl.Thrift)))
	}
	rec, err := hmsRecordOf(t.Name, tbl)
	if err != nil {
		return plan.Record{}, nil, flagged(ReasonUnsupported, err)
	}
	return rec, tbl, nil
}

// hmsRecordOf describes an HMS table as the plan's Record: the one place
// an HMS answer becomes one (RecordOf is Unity Catalog's). The location is
// the serde parameter path (sd.location of a Spark EXTERNAL table is a
// placeholder), the columns the schema in spark.sql.sources.schema (whole
// or in parts; an empty struct when there is none), the protocol and
// clustering the properties Delta's catalog hook writes them as, the
// watermark delta.lastUpdateVersion / delta.lastCommitTimestamp. The etag
// is transient_lastDdlTime, the write's guard; the ID hmsTableID.
func hmsRecordOf(name catalog.TableName, t *hms.Table) (plan.Record, error) {
	hr, err := hms.ReadRecord(t.Thrift)
	if err != nil {
		return plan.Record{}, err
	}
	rec := plan.Record{
		Name: name, Type: hmsType(t.Thrift), Location: hr.Location,
		PartitionColumns: hr.PartitionColumns, Properties: hr.Properties, Comment: hr.Comment,
		Etag: t.Thrift.Parameters[hms.KeyDDLTime], UpdatedTime: fingerprint(t.Thrift), ID: hmsTableID(name, t.Thrift),
	}
	if hr.HasSchema {
		if cols, err := catalog.ColumnsFromSchemaString(hr.Schema); err == nil {
			rec.Columns = cols
		}
		// An unreadable stored schema is drift like any other: the log's
		// replaces it.
	}
	if p, err := catalog.ProtocolFromProperties(hr.Properties); err == nil {
		rec.Protocol = &p
	}
	if cols, _, err := catalog.ClusteringFromProperties(hr.Properties); err != nil {
		rec.ClusteringProblem = err.Error()
	} else {
		rec.Clustering = cols
	}
	if hr.Version >= 0 {
		v := hr.Version
		rec.LastCommitVersion = &v
	}
	if hr.CommitTimestamp >= 0 {
		ts := hr.CommitTimestamp
		rec.LastCommitTimestampMs = &ts
	}
	return rec, nil
}

// hmsTableID is an HMS record's identity, the table_id reports and the
// audit trail show: its name and createTime (HMS has no table uuid), so a
// table dropped and created again under the name is another table.
func hmsTableID(name catalog.TableName, t *hm.Table) string {
	return fmt.Sprintf("%s@%d", strings.ToLower(name.String()), t.CreateTime)
}

// diff is plan.Diff on the record, adjusted for what an HMS record is: it
// stores the schema as the log's own JSON text, so no log type is one it
// cannot store (Unity Catalog's column-type limits do not apply), and a log
// property named like a metastore key (comment, spark.sql.*, a
// server-owned key) is one it cannot sync; with columns: real the HMS
// columns are compared with the log's schema mapped to Hive types.
func (k *hmsKind) diff(log plan.LogState, rec *plan.Record, native any) plan.Plan {
	p := plan.Diff(log, *rec, k.r.opts.Diff)
	p.Unsupported = nil
	for key := range log.Configuration {
		if metastoreKey(key) {
			p.Unsupported = append(p.Unsupported, fmt.Sprintf("property %s: a metastore key, not a log property HMS can hold", key))
		}
	}
	sort.Strings(p.Unsupported)
	if k.cols != hms.ColumnsReal || len(p.Problems) > 0 {
		return p
	}
	schema := log.SchemaString
	if schema == "" {
		schema, _ = rec.ColumnsAsLog()
	}
	want, err := hms.HiveColumns(schema)
	if err != nil {
		p.Unsupported = append(p.Unsupported, fmt.Sprintf("columns: real: %v", err))
		return p
	}
	tbl, _ := native.(*hms.Table)
	var have []*hm.FieldSchema
	if tbl != nil && tbl.Thrift.Sd != nil {
		have = tbl.Thrift.Sd.Cols
	}
	if d := columnsDiffer(want, have); d != "" && p.Schema == nil {
		p.Schema = &plan.SchemaChange{Log: rec.Columns, Catalog: rec.Columns, Details: []string{d}}
	}
	return p
}

// metastoreKey reports whether a log property is named like a key the
// metastore record holds for itself: one HMS cannot sync.
func metastoreKey(key string) bool {
	return hms.ServerOwned(key) || strings.HasPrefix(key, "spark.sql.") || key == hms.KeyComment ||
		key == hms.KeySyncedProperties || key == hms.KeyTrinoVersion || key == hms.KeyTrinoSchema || key == "EXTERNAL"
}

// columnsDiffer says how the HMS columns differ from want ("" if not).
func columnsDiffer(want, have []*hm.FieldSchema) string {
	text := func(cs []*hm.FieldSchema) string {
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = c.Name + " " + c.Type
		}
		return strings.Join(parts, ", ")
	}
	if len(want) == len(have) {
		same := true
		for i := range want {
			if !strings.EqualFold(want[i].Name, have[i].Name) || !strings.EqualFold(want[i].Type, have[i].Type) || want[i].Comment != have[i].Comment {
				same = false
				break
			}
		}
		if same {
			return ""
		}
	}
	return fmt.Sprintf("HMS columns (columns: real): (%s), log: (%s)", text(have), text(want))
}

// desired is the record the log calls for.
func (k *hmsKind) desired(log plan.LogState, rec *plan.Record) hms.Desired {
	schema := log.SchemaString
	if schema == "" { // elided: load made sure the record's schema is it
		schema, _ = rec.ColumnsAsLog()
	}
	props := map[string]string{}
	for key, v := range log.Configuration {
		props[key] = v
	}
	for key, v := range catalog.ProtocolProperties(log.Protocol) {
		props[key] = v
	}
	if log.Clustering != nil {
		b, _ := json.Marshal(log.Clustering)
		props[catalog.PropClusteringColumns] = string(b)
	}
	return hms.Desired{Schema: schema, PartitionColumns: log.PartitionColumns, Comment: log.Description,
		Properties: props, Version: log.Version, CommitTimestamp: log.CommitTimestamp, Columns: k.cols}
}

// next is the table to write: stored with every key deltasync owns set
// to the log's (hms.Apply), but for the properties the user ignores
// (diff.ignore_properties), which stay as stored.
func (k *hmsKind) next(stored *hm.Table, d hms.Desired) (*hm.Table, error) {
	ignore := k.r.opts.Diff.IgnoreProperties
	for key := range d.Properties {
		if ignored(key, ignore) {
			delete(d.Properties, key)
		}
	}
	next, err := hms.Apply(stored, d)
	if err != nil {
		return nil, err
	}
	for key, v := range stored.Parameters {
		if ignored(key, ignore) {
			next.Parameters[key] = v
		}
	}
	for key := range next.Parameters {
		if _, was := stored.Parameters[key]; !was && ignored(key, ignore) {
			delete(next.Parameters, key)
		}
	}
	return next, nil
}

func ignored(key string, globs []string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, key); ok || g == key {
			return true
		}
	}
	return false
}

// errApply marks a record hms.Apply could not build: flagged, not retried.
var errApply = errors.New("the metastore record cannot hold the log's state")

func (k *hmsKind) write(ctx context.Context, t Target, seen *observed, a *applied) error {
	stored, _ := seen.native.(*hms.Table)
	if stored == nil {
		return failed(ReasonInternal, fmt.Errorf("table %s: no metastore record to write from", t.Name))
	}
	next, err := k.next(stored.Thrift, k.desired(seen.log, &seen.rec))
	if err != nil {
		return fmt.Errorf("%w: %w", errApply, err)
	}
	ddl, err := k.c.WriteFrom(ctx, stored, next, k.r.opts.Now(), k.wait)
	req := uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: seen.rec.ID}, uc.AssertEtag{Etag: seen.rec.Etag}},
		Updates:      a.updates,
	}
	// An answer lost is resolved by reading the record again (resolve.go).
	lw := lostWrite{tableID: seen.rec.ID, etagBefore: seen.rec.Etag, written: ddl, updates: a.updates}
	res, err := settle(ctx, err, &lw, func(ctx context.Context) (*plan.Record, error) {
		rec, _, err := k.load(ctx, Target{Name: t.Name}, 0)
		return &rec, err
	})
	if res != nil && err == nil {
		ddl = res.etagAfter
	}
	var answer *uc.LoadTableResponse
	if err == nil {
		answer = &uc.LoadTableResponse{Metadata: uc.TableMetadata{Etag: ddl}}
		// a.wrote stays "": transient_lastDdlTime (the etag) has one-second
		// resolution and is no write's own — another writer whose write
		// followed ours (a same-version write, past a guard on the
		// version) can leave the same value — so a record that still
		// differs after the write is re-planned as another writer's.
	}
	k.r.auditWrite(ctx, t.Name, req, changesSent(a.changes, a.updates), seen.logVersion, answer, err, res, &lw)
	return err
}

func (*hmsKind) isConflict(err error) bool { return errors.Is(err, hms.ErrConflict) }

// writeFailed: HMS's own refusal (an incompatible column type change
// under columns: real, ...) flags the table with HMS's reason, retried on
// the refusal backoff; it is never worked around (no drop and recreate).
func (k *hmsKind) writeFailed(_ context.Context, t Target, _ *observed, a *applied, err error) error {
	var he *hms.Error
	msg := err.Error()
	if errors.As(err, &he) {
		msg = he.Err.Error()
	}
	switch {
	case errors.Is(err, hms.ErrRefused):
		rf := catalog.Refusal{Type: "InvalidOperationException", Message: strings.TrimPrefix(msg, hms.ErrRefused.Error()+": "), Operation: "alter_table_with_environment_context"}
		a.refused = &rf
		return &problem{outcome: OutcomeFlagged, reason: ReasonRefused,
			err: fmt.Errorf("refused by the metastore (%s); the same write is refused every time: fix the table (or exclude it); retried after a long backoff", rf.Message)}
	case errors.Is(err, errApply), errors.Is(err, hms.ErrUnknownFields):
		return flagged(ReasonUnsupported, fmt.Errorf("table %s: %w", t.Name, err))
	}
	var p *problem
	if errors.As(err, &p) {
		return err
	}
	return failed(ReasonCatalog, err)
}

func (*hmsKind) preflight([]uc.Update) (*catalog.Refusal, error) { return nil, nil }

// saved is the write a sync would make from seen, as an edit of the
// record read (what apply sends), and that record's fingerprint (what
// apply checks the record against before sending it).
func (k *hmsKind) saved(seen *observed) (*SavedWrite, error) {
	stored, _ := seen.native.(*hms.Table)
	if stored == nil {
		return nil, failed(ReasonInternal, fmt.Errorf("table %s: no metastore record to plan from", seen.rec.Name))
	}
	next, err := k.next(stored.Thrift, k.desired(seen.log, &seen.rec))
	if err != nil {
		return nil, flagged(ReasonUnsupported, fmt.Errorf("%w: %w", errApply, err))
	}
	return &SavedWrite{RecordFingerprint: recordFingerprint(stored.Thrift), Edit: hms.EditOf(stored.Thrift, next)}, nil
}

// recordFingerprint is fingerprint as a saved plan writes it (hex).
func recordFingerprint(t *hm.Table) string { return strconv.FormatInt(fingerprint(t), 16) }

// ObserveMetastore is an hms.Options.Observer: it counts one metastore
// call as a catalog request (operation = the Thrift call), with the
// status an HTTP catalog would have answered: 200, 404 (not found), 409
// (a failed guard), 400 (refused), or "error".
func (m *Metrics) ObserveMetastore(op string, d time.Duration, err error) {
	status := 200
	switch {
	case err == nil:
	case errors.Is(err, hms.ErrNotFound):
		status = 404
	case errors.Is(err, hms.ErrConflict):
		status = 409
	case errors.Is(err, hms.ErrRefused), errors.Is(err, hms.ErrAlreadyExists):
		status = 400
	default:
		status = 0
	}
	m.ObserveCatalog(op, status, d, err)
}
