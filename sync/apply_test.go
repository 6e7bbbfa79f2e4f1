package sync_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
)

// write is one updateTable request the recorder saw reach the server,
// with the server's answer.
type write struct {
	table     string // the path's last element
	body      string
	status    int
	etagAfter string // the answer's metadata.etag, for a 200
}

// recorder is a reverse proxy in front of the catalog (uctest or the real
// server) that records every updateTable request and its answer: the
// catalog's own history of writes, as it received them.
type recorder struct {
	client *uc.Client
	mu     gosync.Mutex
	writes []write
}

func (r *recorder) all() []write {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]write(nil), r.writes...)
}

func (e *env) recorder() *recorder {
	t := e.t
	base, err := url.Parse(e.client.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	host := &url.URL{Scheme: base.Scheme, Host: base.Host}
	rec := &recorder{}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(host) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isUpdate := r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/delta/v1/catalogs/") &&
			strings.Contains(r.URL.Path, "/tables/")
		if !isUpdate {
			rp.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		cw := &captureWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(cw, r)
		wr := write{table: r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], body: string(body), status: cw.status}
		if cw.status == http.StatusOK {
			var lt uc.LoadTableResponse
			if err := json.Unmarshal(cw.buf.Bytes(), &lt); err == nil {
				wr.etagAfter = lt.Metadata.Etag
			}
		}
		rec.mu.Lock()
		rec.writes = append(rec.writes, wr)
		rec.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	c, err := uc.New(srv.URL+base.Path, uc.Options{
		Retry: uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec.client = c
	return rec
}

type captureWriter struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (w *captureWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *captureWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}

// readAudit reads every record of an audit file.
func readAudit(t testing.TB, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// canonical renders a JSON text with sorted keys, for comparing requests.
func canonical(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSavedPlanApply: plan --out then apply sends exactly the plan's
// updates, one guarded request per table; a table another writer changed
// in between is refused as stale and the others are still applied; the
// audit file has one record per write, matching what the catalog received.
func TestSavedPlanApply(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, table := range []string{"a", "b", "c"} {
		e.register("log-replay-latest-metadata-protocol", table, -1)
	}
	e.divergeCatalog("a", map[string]string{"stray": "x"})
	e.divergeCatalog("b", map[string]string{"stray": "y"})
	rules := []sync.Rule{{Include: []string{e.catalog + ".s.*"}}}
	rep := e.reconciler(rules, func(o *sync.Options) { o.DryRun = true }).Sync(ctx)
	sp := sync.NewSavedPlan(rep, e.client.BaseURL(), kindOfURL(e.client.BaseURL()), "test", time.Now())
	if len(sp.Tables) != 2 {
		t.Fatalf("saved plan has %d tables, want a and b:\n%s", len(sp.Tables), reportText(rep))
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	var buf bytes.Buffer
	if err := sp.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := change.ReadSavedPlan(f, path)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.CheckCatalog(e.client.BaseURL(), kindOfURL(e.client.BaseURL())); err != nil {
		t.Fatal(err)
	}
	if err := loaded.CheckCatalog("http://127.0.0.1:1/api/2.1/unity-catalog", kindOfURL("http://127.0.0.1:1/api/2.1/unity-catalog")); err == nil || !strings.Contains(err.Error(), "plan again") {
		t.Errorf("another catalog: %v, want a refusal", err)
	}
	// Another writer edits b between plan and apply.
	e.divergeCatalog("b", map[string]string{"other": "z"})
	bBefore := e.record("b").Etag

	rec := e.recorder()
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(audit.Options{Path: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	ar := change.Apply(ctx, change.ApplyOptions{Catalog: kindOf(rec.client), Audit: change.AuditOptions{Writer: aw, Command: "apply", Version: "test"}}, loaded)
	_ = aw.Close()
	var text strings.Builder
	_ = ar.WriteText(&text)
	if ar.Applied() || strings.Join(ar.NotApplied(), ",") != e.name("b").String() {
		t.Fatalf("apply: not applied %v, want only b\n%s", ar.NotApplied(), text.String())
	}
	if !strings.Contains(text.String(), "plan again") {
		t.Errorf("apply report does not say to plan again:\n%s", text.String())
	}
	writes := rec.all()
	if len(writes) != 2 {
		t.Fatalf("%d updateTable requests, want one per table of the plan (2): %+v", len(writes), writes)
	}
	for i, w := range writes {
		st := loaded.Tables[i]
		var saved uc.UpdateTableRequest
		if err := json.Unmarshal(st.Request, &saved); err != nil {
			t.Fatalf("%s: request %s: %v", st.Table, st.Request, err)
		}
		want, err := json.Marshal(uc.UpdateTableRequest{
			Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: st.TableID}, uc.AssertEtag{Etag: st.Etag}},
			Updates:      saved.Updates,
		})
		if err != nil {
			t.Fatal(err)
		}
		if canonical(t, w.body) != canonical(t, string(want)) {
			t.Errorf("%s: sent %s, want exactly the plan's %s", w.table, w.body, want)
		}
	}
	if writes[0].status != http.StatusOK || writes[1].status != http.StatusConflict {
		t.Errorf("statuses %d, %d; want 200 for a, 409 for b (stale)", writes[0].status, writes[1].status)
	}
	if _, ok := e.record("a").Properties["stray"]; ok {
		t.Errorf("a still has stray after apply")
	}
	if got := e.record("b"); got.Etag != bBefore || got.Properties["stray"] != "y" {
		t.Errorf("b changed by a refused apply: etag %s (was %s), stray %q", got.Etag, bBefore, got.Properties["stray"])
	}
	recs := readAudit(t, auditPath)
	if len(recs) != len(writes) {
		t.Fatalf("%d audit records for %d writes", len(recs), len(writes))
	}
	for i, w := range writes {
		r := recs[i]
		wantOutcome := "synced"
		if w.status != http.StatusOK {
			wantOutcome = "refused"
		}
		if r["outcome"] != wantOutcome || r["cycle"] != nil || r["table"] != e.name(w.table).String() ||
			r["etag_before"] != loaded.Tables[i].Etag || r["table_id"] != loaded.Tables[i].TableID {
			t.Errorf("audit record %d = %v; want %s of %s", i, r, wantOutcome, w.table)
		}
		if w.status == http.StatusOK && r["etag_after"] != w.etagAfter {
			t.Errorf("audit etag_after %v, the catalog answered %s", r["etag_after"], w.etagAfter)
		}
		if w.status != http.StatusOK && r["etag_after"] != nil {
			t.Errorf("refused write has etag_after %v", r["etag_after"])
		}
	}
	if got := e.record("a").Etag; recs[0]["etag_after"] != got {
		t.Errorf("a's etag is %s, the audit says %v", got, recs[0]["etag_after"])
	}
}

// TestReadSavedPlanRefusesBadFiles: a saved plan is read whole or not at
// all; what is wrong is named with the file and the field.
func TestReadSavedPlanRefusesBadFiles(t *testing.T) {
	good := `{"format_version":"2","kind":"deltasync-saved-plan","catalog_url":"http://h/api/2.1/unity-catalog","catalog_kind":"unity-catalog",` +
		`"catalog_id":"` + change.CatalogID("http://h/api/2.1/unity-catalog") + `","created_at":"2026-12-02T03:00:00Z",` +
		`"deltasync_version":"t","tables":[{"table":"c.s.t","table_id":"u","etag":"e","log_version":3,"changes":[],` +
		`"actions":["remove-properties","update-metadata-snapshot-version"],"edit":{"remove_properties":["x"],"version":3,"commit_timestamp_ms":1},` +
		`"request":{"updates":[{"action":"remove-properties","removals":["x"]},{"action":"update-metadata-snapshot-version","last-commit-version":3,"last-commit-timestamp-ms":1}]}}]}`
	sp, err := change.ReadSavedPlan(strings.NewReader(good), "plan.json")
	if err != nil {
		t.Fatalf("good plan: %v", err)
	}
	if len(sp.Tables) != 1 || len(sp.Tables[0].Actions) != 2 || sp.Tables[0].Edit == nil || sp.Tables[0].Edit.Version != 3 {
		t.Fatalf("good plan read as %+v", sp)
	}
	if err := sp.CheckCatalog("HTTP://H/api/2.1/unity-catalog/", "unity-catalog"); err != nil {
		t.Errorf("same catalog spelled otherwise: %v", err)
	}
	if err := sp.CheckCatalog("http://h2/api/2.1/unity-catalog", "unity-catalog"); err == nil {
		t.Errorf("another catalog accepted")
	}
	if err := sp.CheckCatalog("http://h/api/2.1/unity-catalog", "hive-metastore"); err == nil || !strings.Contains(err.Error(), "Hive Metastore") {
		t.Errorf("a plan for Unity Catalog accepted by a Hive Metastore: %v", err)
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"empty":            {"", "is empty"},
		"blank":            {" \n", "is empty"},
		"truncated":        {good[:len(good)/2], "truncated"},
		"truncated at end": {good[:len(good)-1], "truncated"},
		"not JSON":         {"plan: yes", "invalid JSON"},
		"two documents":    {good + good, "more than one"},
		"unknown key":      {strings.Replace(good, `"kind"`, `"extra":1,"kind"`, 1), "unknown field"},
		"another kind":     {strings.Replace(good, `deltasync-saved-plan`, `other`, 1), "kind"},
		"format 1":         {strings.Replace(good, `"format_version":"2"`, `"format_version":"1"`, 1), "plan again"},
		"another version":  {strings.Replace(good, `"format_version":"2"`, `"format_version":"9"`, 1), "format_version"},
		"no catalog kind":  {strings.Replace(good, `"catalog_kind":"unity-catalog",`, ``, 1), "catalog_kind: missing"},
		"no etag":          {strings.Replace(good, `"etag":"e",`, ``, 1), "tables[0] (c.s.t): etag: missing"},
		"no uuid":          {strings.Replace(good, `"table_id":"u",`, ``, 1), "tables[0] (c.s.t): table_id: missing"},
		"bad name":         {strings.Replace(good, `"c.s.t"`, `"c.s"`, 1), "tables[0] (c.s): table"},
		"no actions":       {strings.Replace(good, `"actions":["remove-properties","update-metadata-snapshot-version"],`, ``, 1), "tables[0] (c.s.t): actions: missing"},
		"no edit":          {strings.Replace(good, `"edit":{"remove_properties":["x"],"version":3,"commit_timestamp_ms":1},`, ``, 1), "tables[0] (c.s.t): edit: missing"},
		"no request":       {good[:strings.Index(good, `"request"`)] + `"request":null}]}`, "tables[0] (c.s.t): request: missing"},
		"no tables":        {strings.Replace(good, `"tables":[`, `"tablez":[`, 1), "unknown field"},
	} {
		t.Run(name, func(t *testing.T) {
			sp, err := change.ReadSavedPlan(strings.NewReader(tc.doc), "plan.json")
			if err == nil || sp != nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "plan.json") {
				t.Errorf("ReadSavedPlan = %v, %v; want an error naming plan.json and saying %q", sp, err, tc.want)
			}
		})
	}
}

// TestSavedPlanCheckWrites: each table's request is checked by the kind
// that will send it before anything is sent: a request changed by hand
// into something a sync never sends (an action the Delta API refuses or
// keeps for MANAGED tables; an HMS edit of EXTERNAL, a server-owned key,
// Spark's keys, another provider) refuses the plan, naming the table.
func TestSavedPlanCheckWrites(t *testing.T) {
	plan := func(kind, table, request string) *change.SavedPlan {
		return &change.SavedPlan{FormatVersion: "2", Kind: change.SavedPlanKind, CatalogKind: kind, Tables: []change.SavedTable{{
			Table: table, TableID: "id", Etag: "e", LogVersion: 3, Actions: []string{"update-metadata-snapshot-version"},
			Edit: &catalog.Edit{Version: 3}, Request: json.RawMessage(request)}}}
	}
	ucKind := kindOf(&uc.Client{})
	var hmsKind catalog.Kind = hms.NewKind(nil, hms.KindOptions{})
	const ucGood = `{"updates":[{"action":"remove-properties","removals":["x"]},{"action":"update-metadata-snapshot-version","last-commit-version":3,"last-commit-timestamp-ms":1}]}`
	const hmsGood = `{"record_fingerprint":"7f","edit":{"set":{"delta.lastUpdateVersion":"3"},"remove":["trino_last_transaction_version"]}}`
	hmsSet := func(kv string) string {
		return strings.Replace(hmsGood, `"set":{"delta.lastUpdateVersion":"3"}`, `"set":{"delta.lastUpdateVersion":"3",`+kv+`}`, 1)
	}
	for name, tc := range map[string]struct {
		kind    catalog.Kind
		request string
		want    string
	}{
		"uc good":           {ucKind, ucGood, ""},
		"uc no updates":     {ucKind, `{"updates":[]}`, "at least one update"},
		"uc unknown action": {ucKind, strings.Replace(ucGood, `remove-properties`, `drop-table`, 1), `unknown update action "drop-table"`},
		"uc managed only": {ucKind, strings.Replace(ucGood, `{"action":"remove-properties","removals":["x"]}`,
			`{"action":"set-latest-backfilled-version","latest-published-version":1}`, 1), "MANAGED"},
		"hms good":            {hmsKind, hmsGood, ""},
		"hms no fingerprint":  {hmsKind, strings.Replace(hmsGood, `"record_fingerprint":"7f",`, ``, 1), "record_fingerprint: missing"},
		"hms no edit":         {hmsKind, `{"record_fingerprint":"7f"}`, "missing"},
		"hms empty edit":      {hmsKind, `{"record_fingerprint":"7f","edit":{}}`, "missing"},
		"hms EXTERNAL":        {hmsKind, hmsSet(`"EXTERNAL":"FALSE"`), "parameter EXTERNAL"},
		"hms ddl time":        {hmsKind, hmsSet(`"transient_lastDdlTime":"1"`), "parameter transient_lastDdlTime is the metastore's own"},
		"hms spark key":       {hmsKind, hmsSet(`"spark.sql.partitionProvider":"x"`), "parameter spark.sql.partitionProvider is Spark's"},
		"hms provider":        {hmsKind, hmsSet(`"spark.sql.sources.provider":"parquet"`), `deltasync writes only "delta"`},
		"hms remove provider": {hmsKind, strings.Replace(hmsGood, `"remove":["trino_last_transaction_version"]`, `"remove":["spark.sql.sources.provider"]`, 1), "keeps its provider"},
		"hms set and removed": {hmsKind, strings.Replace(hmsGood, `"remove":["trino_last_transaction_version"]`, `"remove":["delta.lastUpdateVersion"]`, 1), "is set too"},
	} {
		t.Run(name, func(t *testing.T) {
			table := "c.s.t"
			if tc.kind == hmsKind {
				table = "hive.s.t"
			}
			err := plan(tc.kind.Name(), table, tc.request).CheckWrites(tc.kind)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckWrites = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), table)):
				t.Errorf("CheckWrites = %v; want an error naming %s and saying %q", err, table, tc.want)
			}
		})
	}
}
