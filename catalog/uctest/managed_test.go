package uctest_test

import (
	"fmt"
	"github.com/deltasync/deltasync/catalog/uctest"
	"strings"
	"testing"
)

// newManaged creates a MANAGED table m through staging-tables + createTable.
func newManaged(t *testing.T, opts ...uctest.Option) (*uctest.Server, string, string, string) {
	t.Helper()
	s := newTestServer(t, opts...)
	s.AddSchema("c", "s")
	base := s.URL() + "/delta/v1/catalogs/c/schemas/s"
	st := do(t, "POST", base+"/staging-tables", map[string]any{"name": "m"})
	if st.status != 200 {
		t.Fatalf("staging: %d %s", st.status, st.body)
	}
	id := st.json["table-id"].(string)
	props := map[string]string{}
	for k, v := range st.json["required-properties"].(map[string]any) {
		props[k] = v.(string)
	}
	rp := st.json["required-protocol"].(map[string]any)
	req := map[string]any{
		"name": "m", "location": st.json["location"], "table-type": "MANAGED",
		"columns":                  map[string]any{"type": "struct", "fields": []any{map[string]any{"name": "id", "type": "long", "nullable": true, "metadata": map[string]any{}}}},
		"protocol":                 rp,
		"properties":               props,
		"last-commit-timestamp-ms": 1700000000000,
	}
	cr := do(t, "POST", base+"/tables", req)
	if cr.status != 200 {
		t.Fatalf("create managed: %d %s", cr.status, cr.body)
	}
	if cr.md()["table-uuid"] != id {
		t.Fatalf("managed uuid %v, want the staging id %s", cr.md()["table-uuid"], id)
	}
	if v, ok := cr.json["latest-table-version"].(float64); !ok || v != 0 {
		t.Fatalf("latest-table-version %v, want 0", cr.json["latest-table-version"])
	}
	if c, ok := cr.json["commits"].([]any); !ok || len(c) != 0 {
		t.Fatalf("commits %v, want []", cr.json["commits"])
	}
	// A second create from the same staging location is refused.
	req["name"] = "m2"
	if r := do(t, "POST", base+"/tables", req); r.status != 400 {
		t.Fatalf("re-finalize staging: %d %s", r.status, r.body)
	}
	return s, base + "/tables/m", id, cr.md()["etag"].(string)
}

func commit(v int64, file string) map[string]any {
	return map[string]any{"action": "add-commit", "commit": map[string]any{
		"version": v, "timestamp": 1700000000000 + v, "file-name": file, "file-size": 10, "file-modification-timestamp": 1700000000000 + v}}
}

func TestManagedCommitPath(t *testing.T) {
	s, path, id, etag := newManaged(t)
	_ = s
	r := do(t, "POST", path, upd(id, etag, commit(1, "v1.json")))
	if r.status != 200 {
		t.Fatalf("commit 1: %d %s", r.status, r.body)
	}
	if r.md()["etag"] != etag {
		t.Errorf("data-only add-commit rolled the etag")
	}
	if got := r.json["latest-table-version"]; got != 1.0 {
		t.Errorf("latest-table-version %v", got)
	}
	cases := []struct {
		name   string
		body   map[string]any
		status int
		typ    string
		msg    string
	}{
		{"replay is a whole-request no-op", upd(id, "stale", commit(1, "v1.json"), setProps("x", "1")), 200, "", ""},
		{"same version, other file", upd(id, "", commit(1, "other.json")), 409, "CommitVersionConflictException", "already accepted"},
		{"gap", upd(id, "", commit(3, "v3.json")), 400, "InvalidParameterValueException", "next version after the latest commit 1, but got 3"},
		{"backfill beyond last", upd(id, "", map[string]any{"action": "set-latest-backfilled-version", "latest-published-version": 5}), 400, "InvalidParameterValueException", "Should not backfill"},
		{"snapshot version on MANAGED", upd(id, "", map[string]any{"action": "update-metadata-snapshot-version", "last-commit-version": 1, "last-commit-timestamp-ms": 1}), 400, "InvalidParameterValueException", "only supported for EXTERNAL"},
		{"bad file name", upd(id, "", commit(2, "a/b.json")), 400, "InvalidParameterValueException", "single path segment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, "POST", path, c.body)
			if r.status != c.status || r.errType() != c.typ || !strings.Contains(r.errMessage(), c.msg) {
				t.Fatalf("%d %s, want %d %s %q", r.status, r.body, c.status, c.typ, c.msg)
			}
		})
	}
	lr := do(t, "GET", path, nil)
	if _, ok := lr.props()["x"]; ok {
		t.Errorf("the replayed request applied its sibling set-properties")
	}
	// Metadata with a commit stamps the watermark to the commit.
	r = do(t, "POST", path, upd(id, etag, commit(2, "v2.json"), setProps("y", "2")))
	if r.status != 200 || r.props()["delta.lastUpdateVersion"] != "2" || r.md()["last-commit-version"] != 2.0 {
		t.Fatalf("commit 2 with metadata: %d %s", r.status, r.body)
	}
	commits := r.json["commits"].([]any)
	if len(commits) != 2 || commits[0].(map[string]any)["version"] != 2.0 {
		t.Errorf("commits newest first: %v", commits)
	}
	// Backfill v2: the newest row stays, marked backfilled; the list empties.
	r = do(t, "POST", path, upd(id, "", map[string]any{"action": "set-latest-backfilled-version", "latest-published-version": 2}))
	if r.status != 200 || len(r.json["commits"].([]any)) != 1 || r.json["latest-table-version"] != 2.0 {
		t.Fatalf("backfill answer (still lists v2, as the real server): %d %s", r.status, r.body)
	}
	if r = do(t, "GET", path, nil); len(r.json["commits"].([]any)) != 0 || r.json["latest-table-version"] != 2.0 {
		t.Fatalf("load after backfill: %s", r.body)
	}
	// A version that was backfilled and purged conflicts (v0.6.0 behaviour).
	if r := do(t, "POST", path, upd(id, "", commit(1, "v1.json"))); r.status != 409 {
		t.Errorf("replay of a purged version: %d %s", r.status, r.body)
	}
}

func TestManagedCommitLimit(t *testing.T) {
	_, path, id, _ := newManaged(t)
	for v := int64(1); v <= 10; v++ {
		if r := do(t, "POST", path, upd(id, "", commit(v, fmt.Sprintf("v%d.json", v)))); r.status != 200 {
			t.Fatalf("commit %d: %d %s", v, r.status, r.body)
		}
	}
	r := do(t, "POST", path, upd(id, "", commit(11, "v11.json")))
	if r.status != 429 || r.errType() != "ResourceExhaustedException" {
		t.Fatalf("11th unbackfilled commit: %d %s", r.status, r.body)
	}
	// Backfilling in the same request frees room.
	r = do(t, "POST", path, upd(id, "", commit(11, "v11.json"), map[string]any{"action": "set-latest-backfilled-version", "latest-published-version": 5}))
	if r.status != 200 || len(r.json["commits"].([]any)) != 6 {
		t.Fatalf("commit with backfill: %d %s", r.status, r.body)
	}
}

func TestManagedOptions(t *testing.T) {
	t.Run("replay conflict", func(t *testing.T) {
		_, path, id, _ := newManaged(t, uctest.WithReplayConflict())
		do(t, "POST", path, upd(id, "", commit(1, "v1.json")))
		do(t, "POST", path, upd(id, "", commit(2, "v2.json")))
		if r := do(t, "POST", path, upd(id, "", commit(2, "v2.json"))); r.status != 409 {
			t.Errorf("replay with WithReplayConflict: %d %s", r.status, r.body)
		}
	})
	t.Run("first commit v1", func(t *testing.T) {
		_, path, id, _ := newManaged(t, uctest.WithFirstCommitV1())
		if r := do(t, "POST", path, upd(id, "", commit(4, "v4.json"))); r.status != 400 {
			t.Errorf("first commit v4 with WithFirstCommitV1: %d %s", r.status, r.body)
		}
		if r := do(t, "POST", path, upd(id, "", commit(1, "v1.json"))); r.status != 200 {
			t.Errorf("first commit v1: %d %s", r.status, r.body)
		}
	})
	t.Run("onboarding accepts any first version", func(t *testing.T) {
		_, path, id, _ := newManaged(t)
		if r := do(t, "POST", path, upd(id, "", commit(4, "v4.json"))); r.status != 200 || r.json["latest-table-version"] != 4.0 {
			t.Errorf("first commit v4: %d %s", r.status, r.body)
		}
	})
	t.Run("contract on set-protocol", func(t *testing.T) {
		_, path, id, _ := newManaged(t)
		r := do(t, "POST", path, upd(id, "", map[string]any{"action": "set-protocol", "protocol": map[string]any{"min-reader-version": 1, "min-writer-version": 2}}))
		if r.status != 400 {
			t.Errorf("set-protocol breaking the contract: %d %s", r.status, r.body)
		}
		r = do(t, "POST", path, upd(id, "", map[string]any{"action": "set-domain-metadata", "updates": map[string]any{"delta.clustering": map[string]any{"clusteringColumns": [][]string{{"id"}}}}}))
		if r.status != 400 || !strings.Contains(r.errMessage(), "'clustering' writer feature") {
			t.Errorf("clustering without the feature: %d %s", r.status, r.body)
		}
	})
}

func TestUniform(t *testing.T) {
	s := newTestServer(t)
	s.AddSchema("c", "s")
	tables := s.URL() + "/delta/v1/catalogs/c/schemas/s/tables"
	loc := "file://" + t.TempDir()
	req := extCreate("u", loc)
	req["properties"] = map[string]string{"delta.universalFormat.enabledFormats": "iceberg"}
	cases := []struct {
		name    string
		uniform any
		status  int
		msg     string
	}{
		{"missing", nil, 400, "Uniform metadata must be set"},
		{"outside the table", map[string]any{"iceberg": map[string]any{"metadata-location": "file:///elsewhere/m.json", "converted-delta-version": 0, "converted-delta-timestamp": 1}}, 400, "must be a subpath"},
		{"version 2 at create", map[string]any{"iceberg": map[string]any{"metadata-location": loc + "/metadata/v1.json", "converted-delta-version": 2, "converted-delta-timestamp": 1}}, 400, "must be 0 or 1"},
		{"ok", map[string]any{"iceberg": map[string]any{"metadata-location": loc + "/metadata/v1.json", "converted-delta-version": 0, "converted-delta-timestamp": 1}}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.uniform != nil {
				req["uniform"] = c.uniform
			} else {
				delete(req, "uniform")
			}
			r := do(t, "POST", tables, req)
			if r.status != c.status || !strings.Contains(r.errMessage(), c.msg) {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if r.status == 200 {
				ice, _ := r.json["uniform"].(map[string]any)["iceberg"].(map[string]any)
				if ice["metadata-location"] != loc+"/metadata/v1.json" || ice["converted-delta-version"] != 0.0 {
					t.Errorf("stored uniform %v", r.json["uniform"])
				}
			}
		})
	}
}
