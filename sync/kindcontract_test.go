package sync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/internal/fakehms"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/kindtest"
)

// TestKindContract runs the kind contract (sync/kindtest) against every
// catalog kind: the in-memory uctest, the real Unity Catalog server
// (DELTASYNC_UC_URL), and the real Hive Metastore 4.0.1 and 3.1.3
// (DELTASYNC_HMS4_URL, DELTASYNC_HMS3_URL); a real server that is not
// set up skips, or fails under DELTASYNC_REQUIRE_EXTERNAL=1.
func TestKindContract(t *testing.T) {
	for _, k := range []struct {
		name string
		make func(*testing.T) kindtest.Harness
	}{
		{"uctest", func(t *testing.T) kindtest.Harness { return newUCHarness(t, uctestEnv(t)) }},
		{"uc", func(t *testing.T) kindtest.Harness {
			url := testenv.Getenv(t, "DELTASYNC_UC_URL", testenv.UC, "DELTASYNC_UC_URL is unset: no real Unity Catalog server (.ci/setup-uc.sh)")
			return newUCHarness(t, newEnvAt(t, url))
		}},
		{"hms4", func(t *testing.T) kindtest.Harness {
			return newHMSHarness(t, newHMSEnv(t, "", "DELTASYNC_HMS4_URL"), "alter_table_with_environment_context")
		}},
		// HMS 3 has no server-side guard: deltasync is held at its lock
		// request, before the re-read under the lock (kinds_twowriter_test.go).
		{"hms3", func(t *testing.T) kindtest.Harness {
			return newHMSHarness(t, newHMSEnv(t, "", "DELTASYNC_HMS3_URL"), "lock")
		}},
		// Glue: moto (DELTASYNC_MOTO_URL) behind internal/fakeglue, which
		// enforces VersionId and pages as Glue does (glue_kind_test.go).
		{"glue", func(t *testing.T) kindtest.Harness { return newGlueHarness(t, false) }},
		// Glue with Athena's records (real columns, table_type=DELTA).
		{"glue-athena", func(t *testing.T) kindtest.Harness { return newGlueHarness(t, true) }},
	} {
		t.Run(k.name, func(t *testing.T) {
			start := time.Now()
			kindtest.Run(t, k.make(t))
			t.Logf("%s: the contract in %s", k.name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// plugUC and plugHMS are the only lines that plug a kind's client into
// deltasync's options: what changes when Options gets one catalog field.
func plugUC(o *sync.Options, c *uc.Client) { o.Catalog = kindOf(c) }

func plugUCApply(o *change.ApplyOptions, c *uc.Client) { o.Catalog = kindOf(c) }

func plugHMS(o *sync.Options, c *hms.Client, cols hms.Columns) {
	o.Catalog = hms.NewKind(c, hms.KindOptions{LockWait: 5 * time.Second, Columns: cols, IgnoreProperties: o.Diff.IgnoreProperties})
}

func plugHMSApply(o *change.ApplyOptions, c *hms.Client) {
	o.Catalog = hms.NewKind(c, hms.KindOptions{LockWait: 5 * time.Second})
}

// opCount counts requests per operation.
type opCount struct {
	mu  gosync.Mutex
	ops map[string]int
}

func (c *opCount) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ops == nil {
		c.ops = map[string]int{}
	}
	c.ops[op]++
}

func (c *opCount) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.ops
	c.ops = nil
	if m == nil {
		m = map[string]int{}
	}
	return m
}

// ucHarness is Unity Catalog (uctest or the real server) under the contract.
type ucHarness struct {
	e       *env
	counted *uc.Client
	count   opCount
}

func newUCHarness(t *testing.T, e *env) *ucHarness {
	h := &ucHarness{e: e}
	c, err := uc.New(e.client.BaseURL(), uc.Options{
		Observer: func(op string, _ int, _ time.Duration, _ error) { h.count.add(op) },
		Retry:    uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.counted = c
	return h
}

func (h *ucHarness) CatalogName() string { return h.e.catalog }
func (h *ucHarness) Schema() string      { return h.e.schema }
func (h *ucHarness) URL() string         { return h.e.client.BaseURL() }

func (h *ucHarness) Options(_ *testing.T, base sync.Options) sync.Options {
	plugUC(&base, h.counted)
	return base
}

func (h *ucHarness) ApplyOptions(_ *testing.T, base change.ApplyOptions) change.ApplyOptions {
	plugUCApply(&base, h.counted)
	return base
}

// Register is createTable EXTERNAL with the log's state (sync.Register,
// what an engine's catalog writes).
func (h *ucHarness) Register(t *testing.T, name, dir string) {
	t.Helper()
	if _, err := sync.Register(context.Background(), kindOf(h.e.client), snapshot(t, dir), h.e.name(name), "file://"+dir); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
}

func (h *ucHarness) Record(t *testing.T, name string) (kindtest.Record, bool) {
	t.Helper()
	lt, err := h.e.client.LoadTable(context.Background(), h.e.name(name))
	if uc.IsNotFound(err) {
		return kindtest.Record{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	v := int64(-1)
	if lt.Metadata.LastCommitVersion != nil {
		v = *lt.Metadata.LastCommitVersion
	}
	return kindtest.Record{Version: v, Props: lt.Metadata.Properties}, true
}

// OtherWriter is another client's updateTable, guarded by the etag it read.
func (h *ucHarness) OtherWriter(t *testing.T, name string, ed kindtest.Edit) {
	t.Helper()
	ctx := context.Background()
	lt, err := h.e.client.LoadTable(ctx, h.e.name(name))
	if err != nil {
		t.Fatal(err)
	}
	u := []uc.Update{uc.SetProperties{Updates: ed.Props}}
	if ed.Version >= 0 {
		u = append(u, uc.UpdateMetadataSnapshotVersion{LastCommitVersion: ed.Version, LastCommitTimestampMs: ed.Timestamp})
	}
	if _, err := h.e.client.UpdateTable(ctx, h.e.name(name), uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: lt.Metadata.TableUUID}, uc.AssertEtag{Etag: lt.Metadata.Etag}},
		Updates:      u,
	}); err != nil {
		t.Fatalf("the other writer's update of %s: %v", name, err)
	}
}

// HoldNextWrite puts a proxy before the server that runs interfere just
// before it forwards the first updateTable of the table.
func (h *ucHarness) HoldNextWrite(t *testing.T, name string, base sync.Options, interfere func()) sync.Options {
	e := *h.e
	e.t = t
	plugUC(&base, e.interloper(name, interfere).client)
	return base
}

// Refusing commits a column whose name equals another's but for case:
// Unity Catalog refuses the update (400 InvalidParameterValueException).
func (h *ucHarness) Refusing(t *testing.T, _, dir string, base sync.Options) sync.Options {
	v, _ := kindtest.Latest(t, dir)
	kindtest.Commit(t, dir, v+1, `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},`+
		`{"name":"ID","type":"long","nullable":true,"metadata":{}}]}`, map[string]string{kindtest.Retention: "interval 90 days", "delta.appendOnly": "false"})
	return h.Options(t, base)
}

func (h *ucHarness) Requests() map[string]int { return h.count.take() }

func (h *ucHarness) IsWrite(op string) bool {
	return strings.HasPrefix(op, "create") || strings.HasPrefix(op, "update") || strings.HasPrefix(op, "delete")
}

// SteadyRequests: the schemas listed (listSchemas) and one listTables
// page per cycle, nothing per table.
func (h *ucHarness) SteadyRequests(int) int { return 2 }

// ucOwned are the classic getTable fields deltasync writes.
var ucOwned = []string{"columns", "comment", "properties", "updated_at", "updated_by"}

// Untouched is the classic getTable answer, raw, without the fields
// deltasync owns (the properties but owner.*, another client's here).
func (h *ucHarness) Untouched(t *testing.T, name string) string {
	t.Helper()
	resp, err := http.Get(h.e.client.BaseURL() + "/tables/" + h.e.name(name).String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("getTable %s: %d %v %s", name, resp.StatusCode, err, b)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var props map[string]string
	_ = json.Unmarshal(m["properties"], &props)
	var lines []string
	for k, v := range m {
		if !slices.Contains(ucOwned, k) {
			lines = append(lines, k+"="+string(v))
		}
	}
	for k, v := range props {
		if strings.HasPrefix(k, "owner.") {
			lines = append(lines, "properties."+k+"="+v)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// hmsHarness is a real Hive Metastore under the contract.
type hmsHarness struct {
	e *hmsEnv
	// holdAt is the call of deltasync's write that HoldNextWrite holds.
	holdAt string
}

func newHMSHarness(_ *testing.T, e *hmsEnv, holdAt string) *hmsHarness {
	return &hmsHarness{e: e, holdAt: holdAt}
}

func (h *hmsHarness) CatalogName() string { return hms.DefaultKindName }
func (h *hmsHarness) Schema() string      { return h.e.db }
func (h *hmsHarness) URL() string         { return h.e.url }

func (h *hmsHarness) Options(_ *testing.T, base sync.Options) sync.Options {
	plugHMS(&base, h.e.client, hms.ColumnsPlaceholder)
	return base
}

func (h *hmsHarness) ApplyOptions(_ *testing.T, base change.ApplyOptions) change.ApplyOptions {
	plugHMSApply(&base, h.e.client)
	return base
}

// Register is Spark's registration of a Delta table (no Delta state).
func (h *hmsHarness) Register(t *testing.T, name, dir string) {
	t.Helper()
	if err := h.e.plain.CreateExternalTable(context.Background(), sparkTable(h.e.db, name, "file://"+dir)); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
}

func (h *hmsHarness) Record(t *testing.T, name string) (kindtest.Record, bool) {
	t.Helper()
	got, err := h.e.plain.GetTable(context.Background(), h.e.db, name)
	if errors.Is(err, hms.ErrNotFound) {
		return kindtest.Record{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	p := got.Thrift.Parameters
	v, err := strconv.ParseInt(p[hms.KeyLastUpdateVersion], 10, 64)
	if err != nil {
		v = -1
	}
	return kindtest.Record{Version: v, Props: maps.Clone(p)}, true
}

// OtherWriter is a raw Thrift alter sending transient_lastDdlTime back
// as read (Trino's metadata write): the hardest for a guard to see.
func (h *hmsHarness) OtherWriter(t *testing.T, name string, ed kindtest.Edit) {
	t.Helper()
	params := maps.Clone(ed.Props)
	if ed.Version >= 0 {
		params[hms.KeyLastUpdateVersion] = strconv.FormatInt(ed.Version, 10)
	}
	ctx := context.Background()
	got, err := h.e.plain.GetTable(ctx, h.e.db, name)
	if err != nil {
		t.Fatal(err)
	}
	next := *got.Thrift
	next.Parameters = maps.Clone(got.Thrift.Parameters)
	maps.Copy(next.Parameters, params)
	if err := h.e.plain.AlterTable(ctx, got, &next, hms.Guard{}); err != nil {
		t.Fatalf("the other writer's alter of %s: %v", name, err)
	}
}

// HoldNextWrite puts fakehms.HoldProxy before the metastore, holding the
// call h.holdAt (HMS 4: the guarded alter; HMS 3: the lock).
func (h *hmsHarness) HoldNextWrite(t *testing.T, _ string, base sync.Options, interfere func()) sync.Options {
	p := fakehms.NewHoldProxy(t, h.e.url)
	c, err := hms.New(p.URL, hms.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	hold := p.Hold(h.holdAt)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		select {
		case <-hold.Reached():
			interfere()
			hold.Release()
		case <-done:
		}
	}()
	plugHMS(&base, c, hms.ColumnsPlaceholder)
	return base
}

// Refusing is columns: real: the Spark-registered placeholder column
// cannot take the log's (HMS refuses an incompatible column change).
func (h *hmsHarness) Refusing(_ *testing.T, _, _ string, base sync.Options) sync.Options {
	plugHMS(&base, h.e.client, hms.ColumnsReal)
	return base
}

func (h *hmsHarness) Requests() map[string]int { return h.e.takeCalls() }

func (h *hmsHarness) IsWrite(op string) bool {
	return strings.HasPrefix(op, "alter") || strings.HasPrefix(op, "create") || strings.HasPrefix(op, "drop")
}

// SteadyRequests: the databases and the database's table names listed,
// and one batch read per 100 selected tables, nothing per table.
func (h *hmsHarness) SteadyRequests(n int) int { return 2 + (n+99)/100 }

// Untouched is every field of the raw get_table_req reply
// (fakehms.RawTable) but those deltasync owns (deltasyncOwns).
func (h *hmsHarness) Untouched(t *testing.T, name string) string {
	t.Helper()
	m, err := fakehms.RawTable(context.Background(), h.e.url, h.e.db, name)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for k, v := range m {
		if !deltasyncOwns(k + "=" + v) {
			lines = append(lines, fmt.Sprintf("%s=%s", k, v))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
