package uctest_test

import (
	"fmt"
	"github.com/deltasync/deltasync/catalog/uctest"
	"strings"
	"sync"
	"testing"
)

func TestFailNext(t *testing.T) {
	f := newFixture(t)
	f.srv.FailNext(2, 503)
	for i, path := range []string{f.tables + "/t", f.srv.URL() + "/tables/c.s.t"} {
		r := do(t, "GET", path, nil)
		if r.status != 503 {
			t.Fatalf("request %d: %d", i, r.status)
		}
		if i == 0 && (r.errType() != "InternalServerErrorException" || r.json["error"].(map[string]any)["code"] != 503.0) {
			t.Errorf("Delta envelope: %s", r.body)
		}
		if i == 1 && r.json["error_code"] != "UNAVAILABLE" {
			t.Errorf("classic envelope: %s", r.body)
		}
	}
	if r := do(t, "GET", f.tables+"/t", nil); r.status != 200 {
		t.Errorf("third request: %d", r.status)
	}
	f.srv.FailNextError(1, 429, "ResourceExhaustedException", "slow down")
	if r := do(t, "GET", f.tables+"/t", nil); r.status != 429 || r.errType() != "ResourceExhaustedException" || r.errMessage() != "slow down" {
		t.Errorf("FailNextError: %d %s", r.status, r.body)
	}
}

func TestBeforeUpdateForcesConflict(t *testing.T) {
	f := newFixture(t)
	var calls []string
	f.srv.BeforeUpdate(func(name string) {
		calls = append(calls, name)
		if err := f.srv.MutateTable(name, func(tb *uctest.Table) { tb.Properties["changed"] = "elsewhere" }); err != nil {
			t.Error(err)
		}
	})
	r := do(t, "POST", f.tables+"/t", upd(f.uuid, f.etag, setProps("a", "2")))
	if r.status != 409 || r.errType() != "UpdateRequirementConflictException" ||
		!strings.HasPrefix(r.errMessage(), "assert-etag failed: expected "+f.etag+" but table has ") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if len(calls) != 1 || calls[0] != "c.s.t" {
		t.Errorf("BeforeUpdate calls %v", calls)
	}
	tb, _ := f.srv.Table("c.s.t")
	if tb.Properties["changed"] != "elsewhere" || tb.Properties["a"] != "1" {
		t.Errorf("stored properties %v", tb.Properties)
	}
	if err := f.srv.MutateTable("c.s.nope", func(*uctest.Table) {}); err == nil {
		t.Errorf("MutateTable of a missing table: no error")
	}
}

func TestRequestsRecording(t *testing.T) {
	f := newFixture(t)
	f.srv.ResetRequests()
	do(t, "GET", f.tables+"/t", nil)
	do(t, "POST", f.tables+"/t", upd(f.uuid, "", setProps("a", "1")))
	got := f.srv.Requests()
	if len(got) != 2 || got[0].Method != "GET" || got[1].Method != "POST" ||
		got[1].Path != "/api/2.1/unity-catalog/delta/v1/catalogs/c/schemas/s/tables/t" || !strings.Contains(string(got[1].Body), "set-properties") {
		t.Fatalf("requests %+v", got)
	}
	do(t, "GET", f.srv.URL()+"/tables?catalog_name=c&schema_name=s&max_results=5", nil)
	if q := f.srv.Requests()[2].Query; q != "catalog_name=c&schema_name=s&max_results=5" {
		t.Errorf("query %q", q)
	}
	f.srv.ResetRequests()
	if n := len(f.srv.Requests()); n != 0 {
		t.Errorf("%d requests after reset", n)
	}
}

func TestEtagRules(t *testing.T) {
	cases := []struct {
		name   string
		action map[string]any
		rolls  bool
	}{
		{"no-op set-properties", setProps("a", "1"), true},
		{"remove missing key", map[string]any{"action": "remove-properties", "removals": []string{"zz"}}, true},
		{"same comment", map[string]any{"action": "set-table-comment", "comment": ""}, true},
		{"rowTracking only", map[string]any{"action": "set-domain-metadata", "updates": map[string]any{"delta.rowTracking": map[string]any{"rowIdHighWaterMark": 1}}}, false},
		{"clustering", map[string]any{"action": "set-domain-metadata", "updates": map[string]any{"delta.clustering": map[string]any{"clusteringColumns": [][]string{}}}}, true},
		{"snapshot version", map[string]any{"action": "update-metadata-snapshot-version", "last-commit-version": 3, "last-commit-timestamp-ms": 5}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			r := do(t, "POST", f.tables+"/t", upd(f.uuid, f.etag, c.action))
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if got := r.md()["etag"] != f.etag; got != c.rolls {
				t.Errorf("etag rolled = %v, want %v", got, c.rolls)
			}
		})
	}
}

func TestClusteringKeyOption(t *testing.T) {
	for _, key := range []string{"clusteringColumns", "delta.clusteringColumns"} {
		t.Run(key, func(t *testing.T) {
			var opts []uctest.Option
			if key != "clusteringColumns" {
				opts = append(opts, uctest.WithClusteringKey(key))
			}
			f := newFixture(t, opts...)
			r := do(t, "POST", f.tables+"/t", upd(f.uuid, "", map[string]any{"action": "set-domain-metadata",
				"updates": map[string]any{"delta.clustering": map[string]any{"clusteringColumns": [][]string{{"id"}}}}}))
			if r.props()[key] != `[["id"]]` {
				t.Errorf("properties %v", r.props())
			}
		})
	}
}

func TestConcurrentUpdates(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, conflicts := 0, 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := do(t, "POST", f.tables+"/t", upd(f.uuid, f.etag, setProps(fmt.Sprint("k", i), "v")))
			mu.Lock()
			defer mu.Unlock()
			switch r.status {
			case 200:
				ok++
			case 409:
				conflicts++
			default:
				t.Errorf("%d %s", r.status, r.body)
			}
		}(i)
	}
	wg.Wait()
	if ok != 1 || conflicts != 7 {
		t.Errorf("%d succeeded, %d conflicted; want exactly one winner on the same etag", ok, conflicts)
	}
}
