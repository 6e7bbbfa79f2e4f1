package sync_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
)

// schemas compiles the published JSON Schemas (sync/schemas).
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	names := []string{"change", "plan", "saved-plan", "audit-record"}
	for _, n := range names {
		f, err := os.Open(filepath.Join("schemas", n+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if err := c.AddResource("https://deltasync.dev/schemas/"+n+".schema.json", doc); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, n := range names {
		s, err := c.Compile("https://deltasync.dev/schemas/" + n + ".schema.json")
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[n] = s
	}
	return out
}

func validate(t *testing.T, s *jsonschema.Schema, what string, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s does not match its schema: %v\n%s", what, err, doc)
	}
}

// TestDocumentsMatchTheirSchemas validates every kind of document
// deltasync produces for people to build on (the JSON report, a saved
// plan, audit records of each outcome but failed, not_applied and unknown:
// TestLostAnswersAuditedAsTheServerSawThem validates those) against the schemas
// published in sync/schemas, and checks the schemas refuse a document
// that breaks them.
func TestDocumentsMatchTheirSchemas(t *testing.T) {
	sch := schemas(t)
	e := uctestEnv(t)
	ctx := context.Background()
	for _, table := range []string{"a", "b"} {
		e.register("log-replay-latest-metadata-protocol", table, -1)
		e.divergeCatalog(table, map[string]string{"stray": "x"})
	}
	hold := []sync.Rule{{Include: []string{e.catalog + ".s.a"}, OnDestructive: sync.OnDestructiveHold}, {Include: []string{e.catalog + ".s.*"}}}
	dry := e.reconciler(hold, func(o *sync.Options) { o.DryRun = true }).Sync(ctx)
	var rep bytes.Buffer
	if err := dry.WriteJSON(&rep); err != nil {
		t.Fatal(err)
	}
	validate(t, sch["plan"], "plan -o json", rep.Bytes())
	if !strings.Contains(rep.String(), `"held": "destructive"`) || !strings.Contains(rep.String(), `"class": "destructive"`) {
		t.Errorf("the report shows no held table or class:\n%s", rep.String())
	}
	sp := sync.NewSavedPlan(dry, e.client.BaseURL(), kindOfURL(e.client.BaseURL()), "test", time.Now())
	var spb bytes.Buffer
	if err := sp.WriteJSON(&spb); err != nil {
		t.Fatal(err)
	}
	validate(t, sch["saved-plan"], "saved plan", spb.Bytes())

	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(audit.Options{Path: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	ao := change.AuditOptions{Writer: aw, Command: "once", Version: "test"}
	e.reconciler(hold, func(o *sync.Options) { o.Audit = ao }).Sync(ctx) // a held, b synced
	e.divergeCatalog("a", map[string]string{"other": "y"})               // the saved plan is stale for a
	ao.Command = "apply"
	change.Apply(ctx, change.ApplyOptions{Catalog: kindOf(e.client), Audit: ao}, sp) // a refused, b refused (synced since)
	_ = aw.Close()
	f, err := os.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		validate(t, sch["audit-record"], "audit record", sc.Bytes())
		for _, o := range []string{"held", "synced", "refused"} {
			if strings.Contains(sc.Text(), `"outcome":"`+o+`"`) {
				seen[o] = true
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("audit outcomes seen %v, want held, synced and refused", seen)
	}

	// The schemas can fail: a report of another version, a saved plan
	// without etag, a synced record without etag_after.
	for name, bad := range map[string]struct{ schema, doc string }{
		"old report": {"plan", strings.Replace(rep.String(), `"format_version": "2"`, `"format_version": "1"`, 1)},
		"no etag":    {"saved-plan", strings.Replace(spb.String(), `"etag":`, `"etagx":`, 1)},
		"synced, no etag_after": {"audit-record", `{"format_version":"1","time":"2026-12-02T04:00:00Z","cycle":1,"table":"c.s.t","table_id":"u",` +
			`"etag_before":"e","etag_after":null,"outcome":"synced","actions":[],"changes":[],"deltasync_version":"x"}`},
		"not_applied with etag_after": {"audit-record", `{"format_version":"1","time":"2026-12-02T04:00:00Z","cycle":1,"table":"c.s.t","table_id":"u",` +
			`"etag_before":"e","etag_after":"f","outcome":"not_applied","actions":[],"changes":[],"deltasync_version":"x"}`},
		"an outcome no version writes": {"audit-record", `{"format_version":"1","time":"2026-12-02T04:00:00Z","cycle":1,"table":"c.s.t","table_id":"u",` +
			`"etag_before":"e","etag_after":null,"outcome":"lost","actions":[],"changes":[],"deltasync_version":"x"}`},
		"resolves not a time": {"audit-record", `{"format_version":"1","time":"2026-12-02T04:00:00Z","cycle":1,"table":"c.s.t","table_id":"u",` +
			`"etag_before":"e","etag_after":"f","outcome":"synced","resolves":"yesterday","actions":[],"changes":[],"deltasync_version":"x"}`},
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(bad.doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sch[bad.schema].Validate(v) == nil {
			t.Errorf("%s: the %s schema accepts it", name, bad.schema)
		}
	}
}
