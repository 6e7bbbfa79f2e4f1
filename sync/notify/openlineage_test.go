package notify_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync/notify"
)

// olEvent decodes an OpenLineage event, dropping what is empty (Serde
// keeps the generated classes' empty defaults, [] and {}; deltasync
// leaves them out), so that the two encodings compare field for field.
func olEvent(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return prune(v).(map[string]any)
}

func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			e = prune(e)
			if m, ok := e.(map[string]any); ok && len(m) == 0 {
				continue
			}
			if l, ok := e.([]any); ok && len(l) == 0 {
				continue
			}
			out[k] = e
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			out = append(out, prune(e))
		}
		return out
	}
	return v
}

// TestOpenLineageMatchesPythonClient: the event deltasync sends equals the
// same event built with openlineage-python's generated classes (1.54.0,
// .ci/setup-python.sh) and serialised by its Serde — the event type, every
// facet's _producer and _schemaURL, the schema facet's (nested) fields and
// the custom facet — so our reading of the spec is checked by its
// project's own client.
func TestOpenLineageMatchesPythonClient(t *testing.T) {
	py := os.Getenv("DELTASYNC_PYTHON")
	if py == "" {
		testenv.Missing(t, testenv.External, "DELTASYNC_PYTHON unset: needs a python with openlineage-python (eval \"$(bash .ci/setup-python.sh start)\")")
	}
	if err := exec.Command(py, "-c", "import openlineage.client").Run(); err != nil {
		testenv.Missing(t, testenv.External, "DELTASYNC_PYTHON has no openlineage-python (bash .ci/setup-python.sh start installs it)")
	}
	l := notify.Lineage{Namespace: "prod-sync", CatalogName: "unity", CatalogURI: "http://uc.example:8080"}
	for _, mut := range []func(*notify.Event){
		func(*notify.Event) {},
		func(e *notify.Event) { e.Kind, e.Reason = notify.KindRefused, "catalog refused: too many columns" },
		func(e *notify.Event) { e.Kind, e.Reason = notify.KindHeld, "destructive change held" },
	} {
		e, _ := notify.FromNotice(schemaNotice(), "dsync-1", time.Date(2026, 12, 6, 9, 0, 0, 123000000, time.UTC))
		mut(&e)
		ours, err := notify.OpenLineage(e, l)
		if err != nil {
			t.Fatal(err)
		}
		var parsed map[string]any
		_ = json.Unmarshal(ours, &parsed)
		out := parsed["outputs"].([]any)[0].(map[string]any)
		job := parsed["job"].(map[string]any)
		var schema any
		_ = json.Unmarshal(e.Schema, &schema)
		in, _ := json.Marshal(map[string]any{
			"producer": notify.DefaultProducer, "changes_url": notify.ChangesFacetURL, "time": parsed["eventTime"],
			"event_type": parsed["eventType"], "run_id": parsed["run"].(map[string]any)["runId"],
			"job_namespace": job["namespace"], "job_name": job["name"], "ds_namespace": out["namespace"], "ds_name": out["name"],
			"schema": schema, "catalog_uri": l.CatalogURI, "catalog_name": l.CatalogName, "catalog_kind": e.CatalogKind,
			"table": e.Table, "version": *e.LogVersion, "kind": e.Kind, "id": e.ID, "instance": e.Instance,
			"reason": nilIfEmpty(e.Reason), "changes": e.Changes,
		})
		cmd := exec.Command(py, "testdata/ol_event.py")
		cmd.Stdin = bytes.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		theirs, err := cmd.Output()
		if err != nil {
			t.Fatalf("openlineage-python: %v\n%s", err, stderr.String())
		}
		if d := cmp.Diff(olEvent(t, theirs), olEvent(t, ours)); d != "" {
			t.Errorf("%s event: deltasync's OpenLineage differs from openlineage-python's (-python +deltasync):\n%s", e.Kind, d)
		}
		if out["namespace"] != "s3://bucket" || out["name"] != "lake/t" || job["name"] != "deltasync.unity-catalog" {
			t.Errorf("dataset %v/%v, job %v: want s3://bucket / lake/t (naming spec), deltasync.unity-catalog", out["namespace"], out["name"], job["name"])
		}
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
