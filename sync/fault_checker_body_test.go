package sync_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// fixedLog is a logStates whose every table is one log state.
type fixedLog struct{ state plan.LogState }

func (f fixedLog) stateAt(string, int64) (plan.LogState, bool) { return f.state, true }
func (f fixedLog) withLatest(_ string, fn func(plan.LogState)) { fn(f.state) }

// TestClassifyUpdateBody: an updateTable body cut short at any byte (a
// daemon killed mid-request) is "truncated", never "unguarded"; a whole
// body without assert-etag is unguarded; one with it is guarded; a body
// that is not JSON and not a prefix of it is malformed.
func TestClassifyUpdateBody(t *testing.T) {
	guarded := `{"requirements":[{"type":"assert-table-uuid","uuid":"u"},{"type":"assert-etag","etag":"e1"}],` +
		`"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`
	unguarded := `{"requirements":[{"type":"assert-table-uuid","uuid":"u"}],"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`
	if etag, v, err := classifyUpdate([]byte(guarded)); v != bodyGuarded || etag != "e1" || err != nil {
		t.Errorf("guarded body: %v %q %v", v, etag, err)
	}
	if _, v, err := classifyUpdate([]byte(unguarded)); v != bodyUnguarded || err != nil {
		t.Errorf("unguarded body: %v %v", v, err)
	}
	for n := range len(guarded) {
		if _, v, err := classifyUpdate([]byte(guarded[:n])); v != bodyTruncated {
			t.Errorf("body cut after %d bytes %q: verdict %v (%v), want truncated", n, guarded[:n], v, err)
		}
	}
	for _, bad := range []string{`{"requirements":]`, `not json`, guarded + `}`} {
		if _, v, _ := classifyUpdate([]byte(bad)); v != bodyMalformed {
			t.Errorf("body %q: verdict %v, want malformed", bad, v)
		}
	}
}

// TestFaultCheckerTruncatedBody: through the checker's updateTable hook, a
// body cut short by the kill is counted as truncated and is no violation;
// a whole body without assert-etag is still one. (Before, the decode error
// was ignored and the truncated body read as "update sent without
// assert-etag".)
func TestFaultCheckerTruncatedBody(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("checkpoint", "t0", -1)
	name := e.name("t0")
	chk := newChecker(t, e.client, fixedLog{sync.LogStateOf(snapshot(t, dir), "file://"+dir)}, map[string]catalog.TableName{"t0": name})
	etag := e.record("t0").Etag
	path := "/api/2.1/unity-catalog/delta/v1/catalogs/" + name.Catalog + "/schemas/" + name.Schema + "/tables/" + name.Table
	send := func(body string) {
		chk.beforeUpdate(httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)), []byte(body))
	}
	whole := `{"requirements":[{"type":"assert-table-uuid","uuid":"u"},{"type":"assert-etag","etag":"` + etag + `"}],` +
		`"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`
	send(whole[:len(whole)/2])
	if v := chk.violationList(); len(v) != 0 || chk.truncated.Load() != 1 || chk.updates.Load() != 0 {
		t.Fatalf("truncated body: violations %q, %d truncated, %d updates; want none, 1, 0", v, chk.truncated.Load(), chk.updates.Load())
	}
	send(`{"requirements":[{"type":"assert-table-uuid","uuid":"u"}],"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`)
	if v := chk.violationList(); len(v) != 1 || !strings.Contains(v[0], "t0: update sent without assert-etag") || chk.truncated.Load() != 1 {
		t.Fatalf("unguarded body: violations %q, %d truncated; want the one unguarded write", v, chk.truncated.Load())
	}
}
