package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/internal/testenv"
)

// probe is one raw request sent to both servers. Placeholders: {c} catalog,
// {s} schema, {t} path of EXTERNAL table t, {m} path of MANAGED table m,
// {uuid} / {muuid} their uuids.
type probe struct {
	name, method, path, body string
}

// TestDifferential sends the same requests, in the same order, to a real
// server (DELTASYNC_UC_URL) and to uctest, and compares the status and the
// error type (Delta) or error_code (classic) of every answer. Messages are
// not compared: for malformed JSON the server quotes its parser.
func TestDifferential(t *testing.T) {
	url := testenv.Getenv(t, "DELTASYNC_UC_URL", testenv.UC,
		"DELTASYNC_UC_URL is not set; nothing to compare uctest with (start a server with `make uc-up` or .ci/setup-uc.sh)")
	spectest.RequireDefaultSpec(t)
	srv := spectest.NewServer()
	defer srv.Close()
	envs := []*diffEnv{newDiffEnv(t, url, os.Getenv("DELTASYNC_UC_TOKEN")), newDiffEnv(t, srv.URL(), "")}
	for _, p := range diffProbes() {
		var got [2]string
		for i, e := range envs {
			got[i] = e.send(t, p)
		}
		if got[0] != got[1] {
			t.Errorf("%s: real server %s, uctest %s", p.name, got[0], got[1])
		}
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("uctest violations (all probes are marked as expected): %q", v)
	}
}

type diffEnv struct {
	h                *harness
	tpath, mpath     string
	uuid, muuid      string
	managedAvailable bool
}

func newDiffEnv(t *testing.T, base, token string) *diffEnv {
	h := &harness{cfg: config{client: &http.Client{Timeout: 30 * time.Second}, token: token}, base: strings.TrimRight(base, "/"), catalog: "deltasync_diff_" + randHex(5)}
	h.setup(t)
	e := &diffEnv{h: h}
	md := h.createExternal(t, h.schema, "t")
	e.tpath, e.uuid = h.tablePath(h.schema, "t"), str(md["table-uuid"])
	_, loc := fileLocation(t)
	h.do(t, "POST", "/tables", map[string]any{"name": "pq", "catalog_name": h.catalog, "schema_name": h.schema, "table_type": "EXTERNAL",
		"data_source_format": "PARQUET", "storage_location": loc,
		"columns": []any{map[string]any{"name": "id", "type_name": "LONG", "type_text": "bigint", "type_json": `{"name":"id","type":"long","nullable":true,"metadata":{}}`, "position": 0, "nullable": true}}}).
		want(t, 200, "classic create PARQUET")
	base2 := "/delta/v1/catalogs/" + h.catalog + "/schemas/" + h.schema
	st := h.do(t, "POST", base2+"/staging-tables", map[string]any{"name": "m"})
	if st.status == 200 {
		cp := map[string]any{}
		for k, v := range st.json["required-properties"].(map[string]any) {
			cp[k] = v
		}
		cr := h.do(t, "POST", base2+"/tables", map[string]any{"name": "m", "location": st.json["location"], "table-type": "MANAGED",
			"columns":  map[string]any{"type": "struct", "fields": []any{field("id", "long", true, map[string]any{})}},
			"protocol": st.json["required-protocol"], "properties": cp, "last-commit-timestamp-ms": 1700000000000}).want(t, 200, "create MANAGED")
		e.mpath, e.muuid, e.managedAvailable = h.tablePath(h.schema, "m"), str(metadata(t, cr)["table-uuid"]), true
	}
	return e
}

func (e *diffEnv) send(t *testing.T, p probe) string {
	t.Helper()
	if strings.Contains(p.path+p.body, "{m") && !e.managedAvailable {
		return "skipped (no MANAGED)"
	}
	r := strings.NewReplacer("{t}", e.tpath, "{m}", e.mpath, "{c}", e.h.catalog, "{s}", e.h.schema, "{uuid}", e.uuid, "{muuid}", e.muuid)
	var body io.Reader
	if p.body != "" {
		body = strings.NewReader(r.Replace(p.body))
	}
	req, err := http.NewRequest(p.method, e.h.base+r.Replace(p.path), body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.h.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.h.cfg.token)
	}
	req.Header.Set(uctest.ExpectViolationHeader, "1")
	res, err := e.h.cfg.client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := fmt.Sprint(res.StatusCode)
	var m map[string]any
	if json.Unmarshal(bytes.TrimSpace(b), &m) == nil {
		if e, ok := m["error"].(map[string]any); ok {
			out += fmt.Sprint(" ", e["type"])
		} else if c, ok := m["error_code"]; ok {
			out += fmt.Sprint(" ", c)
		} else if c, ok := m["commits"].([]any); ok && m["latest-table-version"] != nil {
			var vs []any
			for _, x := range c {
				vs = append(vs, x.(map[string]any)["version"])
			}
			out += fmt.Sprintf(" commits=%v latest=%v", vs, m["latest-table-version"])
		}
	}
	return out
}

func diffProbes() []probe {
	u := `{"type":"assert-table-uuid","uuid":"{uuid}"}`
	upd := func(actions string) string { return `{"requirements":[` + u + `],"updates":[` + actions + `]}` }
	mupd := func(actions string) string {
		return `{"requirements":[{"type":"assert-table-uuid","uuid":"{muuid}"}],"updates":[` + actions + `]}`
	}
	commit := func(v int, f string) string {
		return fmt.Sprintf(`{"action":"add-commit","commit":{"version":%d,"timestamp":%d,"file-name":"%s","file-size":10,"file-modification-timestamp":5}}`, v, 1700000000000+v, f)
	}
	col := func(typ string) string {
		return `{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"a","type":` + typ + `,"nullable":true,"metadata":{}}]}}`
	}
	create := func(name, loc, extra string) string {
		return `{"name":"` + name + `","location":"` + loc + `","table-type":"EXTERNAL","columns":{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]},"protocol":{"min-reader-version":1,"min-writer-version":2},"properties":{},"last-commit-timestamp-ms":1` + extra + `}`
	}
	tables := "/delta/v1/catalogs/{c}/schemas/{s}/tables"
	return []probe{
		{"config without catalog", "GET", "/delta/v1/config?protocol-versions=1.0", ""},
		{"config with an empty catalog", "GET", "/delta/v1/config?catalog=&protocol-versions=1.0", ""},
		{"config without protocol-versions", "GET", "/delta/v1/config?catalog={c}", ""},
		{"set-columns with no fields", "POST", "{t}", upd(`{"action":"set-columns","columns":{"type":"struct","fields":[]}}`)},
		{"set-columns duplicate names", "POST", "{t}", upd(`{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}},{"name":"A","type":"long","nullable":true,"metadata":{}}]}}`)},
		{"set-columns void", "POST", "{t}", upd(col(`"void"`))},
		{"set-columns decimal(40,2)", "POST", "{t}", upd(col(`"decimal(40,2)"`))},
		{"set-columns nested empty struct", "POST", "{t}", upd(col(`{"type":"struct","fields":[]}`))},
		{"set-columns array without contains-null", "POST", "{t}", upd(col(`{"type":"array","element-type":"long"}`))},
		{"set-columns dropping a partition column", "POST", "{t}", upd(col(`"long"`))},
		{"set-columns unknown field", "POST", "{t}", upd(`{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{},"x":1}]}}`)},
		{"set-partition-columns duplicate", "POST", "{t}", upd(`{"action":"set-partition-columns","partition-columns":["id","ID"]}`)},
		{"set-partition-columns empty", "POST", "{t}", upd(`{"action":"set-partition-columns","partition-columns":[]}`)},
		{"remove-domain-metadata unknown domain", "POST", "{t}", upd(`{"action":"remove-domain-metadata","domains":["x.y"]}`)},
		{"set-domain-metadata empty", "POST", "{t}", upd(`{"action":"set-domain-metadata","updates":{}}`)},
		{"set-domain-metadata unknown domain", "POST", "{t}", upd(`{"action":"set-domain-metadata","updates":{"x.y":{"a":1}}}`)},
		{"snapshot version without timestamp", "POST", "{t}", upd(`{"action":"update-metadata-snapshot-version","last-commit-version":3}`)},
		{"set-table-comment null", "POST", "{t}", upd(`{"action":"set-table-comment","comment":null}`)},
		{"set-properties empty", "POST", "{t}", upd(`{"action":"set-properties","updates":{}}`)},
		{"body null", "POST", "{t}", `null`},
		{"body {}", "POST", "{t}", `{}`},
		{"no requirements", "POST", "{t}", `{"updates":[{"action":"set-properties","updates":{"a":"1"}}]}`},
		{"uuid that is not a UUID", "POST", "{t}", `{"requirements":[{"type":"assert-table-uuid","uuid":"nope"}],"updates":[{"action":"set-properties","updates":{"a":"1"}}]}`},
		{"unknown requirement", "POST", "{t}", `{"requirements":[` + u + `,{"type":"assert-owner"}],"updates":[{"action":"set-properties","updates":{"a":"1"}}]}`},
		{"unknown action", "POST", "{t}", upd(`{"action":"set-owner","owner":"x"}`)},
		{"unknown field in an action", "POST", "{t}", upd(`{"action":"set-properties","updates":{"a":"1"},"extra":1}`)},
		{"unknown top-level field", "POST", "{t}", `{"requirements":[` + u + `],"updates":[{"action":"set-properties","updates":{"a":"1"}}],"extra":true}`},
		{"unknown field in a requirement", "POST", "{t}", `{"requirements":[{"type":"assert-table-uuid","uuid":"{uuid}","x":1}],"updates":[{"action":"set-properties","updates":{"a":"1"}}]}`},
		{"decimal in object form", "POST", "{t}", upd(`{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"id","type":{"type":"decimal","precision":5,"scale":2},"nullable":true,"metadata":{}},{"name":"day","type":"date","nullable":true,"metadata":{}}]}}`)},
		{"create with a bad name", "POST", tables, create("a.b", "file:///tmp/deltasync-diff/1", "")},
		{"create at a bucket root", "POST", tables, create("r1", "s3://bucket", "")},
		{"create with an unknown field", "POST", tables, create("r2", "file:///tmp/deltasync-diff/2", `,"owner":"me"`)},
		{"create in a missing schema", "POST", "/delta/v1/catalogs/{c}/schemas/nope/tables", create("r3", "file:///tmp/deltasync-diff/3", "")},
		{"create MANAGED without staging", "POST", tables, `{"name":"m9","location":"file:///tmp/deltasync-diff/4","table-type":"MANAGED","columns":{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]},"protocol":{"min-reader-version":3,"min-writer-version":7,"reader-features":["catalogManaged","deletionVectors","v2Checkpoint","vacuumProtocolCheck"],"writer-features":["catalogManaged","deletionVectors","v2Checkpoint","vacuumProtocolCheck","inCommitTimestamp"]},"properties":{"delta.enableDeletionVectors":"true","delta.checkpointPolicy":"v2","delta.enableInCommitTimestamps":"true","delta.checkpoint.writeStatsAsStruct":"true","delta.checkpoint.writeStatsAsJson":"true","io.unitycatalog.tableId":"00000000-0000-4000-8000-000000000000"},"last-commit-timestamp-ms":1}`},
		{"rename to the same name", "POST", "{t}/rename", `{"new-name":"t"}`},
		{"rename a missing table", "POST", tables + "/nope/rename", `{"new-name":"x"}`},
		{"rename to a bad name", "POST", "{t}/rename", `{"new-name":"a b"}`},
		{"metrics for another table-id", "POST", "{t}/metrics", `{"table-id":"00000000-0000-4000-8000-000000000000"}`},
		{"staging credentials of an unknown id", "GET", "/delta/v1/staging-tables/00000000-0000-4000-8000-000000000000/credentials", ""},
		{"staging credentials of a real table", "GET", "/delta/v1/staging-tables/{uuid}/credentials", ""},
		{"staging with a blank name", "POST", "/delta/v1/catalogs/{c}/schemas/{s}/staging-tables", `{"name":""}`},
		{"staging with a taken name", "POST", "/delta/v1/catalogs/{c}/schemas/{s}/staging-tables", `{"name":"t"}`},
		{"staging with an unknown field", "POST", "/delta/v1/catalogs/{c}/schemas/{s}/staging-tables", `{"name":"st1","x":1}`},
		{"load a PARQUET table", "GET", tables + "/pq", ""},
		{"credentials of a PARQUET table", "GET", tables + "/pq/credentials?operation=READ", ""},
		{"credentials with a bad operation", "GET", "{t}/credentials?operation=WRITE", ""},
		{"HEAD in a missing schema", "HEAD", "/delta/v1/catalogs/{c}/schemas/nope/tables/x", ""},
		{"Delta list tables (advertised, no handler)", "GET", tables, ""},
		{"temporary-path-credentials (no handler)", "GET", "/delta/v1/temporary-path-credentials?location=file:///tmp/x&operation=READ", ""},
		{"classic list with max_results=-1", "GET", "/tables?catalog_name={c}&schema_name={s}&max_results=-1", ""},
		{"classic list in a missing schema", "GET", "/tables?catalog_name={c}&schema_name=nope", ""},
		{"classic get with two name parts", "GET", "/tables/{c}.{s}", ""},
		{"classic get of a missing schema", "GET", "/schemas/{c}.nope", ""},
		{"classic schemas of a missing catalog", "GET", "/schemas?catalog_name=deltasync_no_such_catalog", ""},
		{"classic create of an existing schema", "POST", "/schemas", `{"name":"{s}","catalog_name":"{c}"}`},
		{"classic create of an existing table", "POST", "/tables", `{"name":"t","catalog_name":"{c}","schema_name":"{s}","table_type":"EXTERNAL","data_source_format":"DELTA","storage_location":"file:///tmp/deltasync-diff/5","columns":[{"name":"id","type_name":"LONG","type_text":"bigint","type_json":"{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}","position":0,"nullable":true}]}`},
		{"classic create with a mismatched type_json", "POST", "/tables", `{"name":"bj","catalog_name":"{c}","schema_name":"{s}","table_type":"EXTERNAL","data_source_format":"DELTA","storage_location":"file:///tmp/deltasync-diff/6","columns":[{"name":"id","type_name":"LONG","type_text":"bigint","type_json":"{\"name\":\"other\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}","position":0,"nullable":true}]}`},
		{"MANAGED: backfill on an empty log", "POST", "{m}", mupd(`{"action":"set-latest-backfilled-version","latest-published-version":1}`)},
		{"MANAGED: clustering without the feature", "POST", "{m}", mupd(`{"action":"set-domain-metadata","updates":{"delta.clustering":{"clusteringColumns":[["id"]]}}}`)},
		{"MANAGED: rowTracking without the feature", "POST", "{m}", mupd(`{"action":"set-domain-metadata","updates":{"delta.rowTracking":{"rowIdHighWaterMark":3}}}`)},
		{"MANAGED: set-protocol 1/2", "POST", "{m}", mupd(`{"action":"set-protocol","protocol":{"min-reader-version":1,"min-writer-version":2}}`)},
		{"MANAGED: removing a required property", "POST", "{m}", mupd(`{"action":"set-protocol","protocol":{"min-reader-version":3,"min-writer-version":7,"reader-features":["catalogManaged","deletionVectors","v2Checkpoint","vacuumProtocolCheck"],"writer-features":["catalogManaged","deletionVectors","v2Checkpoint","vacuumProtocolCheck","inCommitTimestamp"]}},{"action":"remove-properties","removals":["delta.checkpointPolicy"]}`)},
		{"MANAGED: zero file-size", "POST", "{m}", mupd(`{"action":"add-commit","commit":{"version":1,"timestamp":1,"file-name":"f.json","file-size":0,"file-modification-timestamp":5}}`)},
		{"MANAGED: onboarding at v5 ignores a backfill", "POST", "{m}", mupd(commit(5, "v5.json") + `,{"action":"set-latest-backfilled-version","latest-published-version":9}`)},
		{"MANAGED: backfill above the last commit", "POST", "{m}", mupd(commit(6, "v6.json") + `,{"action":"set-latest-backfilled-version","latest-published-version":7}`)},
		{"MANAGED: v6 with a backfill of v5", "POST", "{m}", mupd(commit(6, "v6.json") + `,{"action":"set-latest-backfilled-version","latest-published-version":5}`)},
		{"MANAGED: replay of a purged version", "POST", "{m}", mupd(commit(5, "v5.json"))},
		{"MANAGED: replay of v6", "POST", "{m}", mupd(commit(6, "v6.json"))},
		{"MANAGED: backfill below the first commit", "POST", "{m}", mupd(`{"action":"set-latest-backfilled-version","latest-published-version":4}`)},
		{"MANAGED: uniform without iceberg enabled", "POST", "{m}", mupd(`{"action":"add-commit","commit":{"version":7,"timestamp":1700000000007,"file-name":"v7.json","file-size":10,"file-modification-timestamp":5},"uniform":{"iceberg":{"metadata-location":"file:///tmp/m.json","converted-delta-version":7,"converted-delta-timestamp":5}}}`)},
		{"MANAGED: load", "GET", "{m}", ""},
	}
}
