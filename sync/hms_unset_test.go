package sync_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/internal/fakehms"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
)

// sparkUnset are the Table fields Spark's (Java) Hive client leaves null
// when it registers a Delta table: sd.serdeInfo.name, viewOriginalText,
// viewExpandedText (gohive would send them as "").
var sparkUnset = []string{"7.7.1", "10", "11"}

// hmsParam is a Table.parameters entry in a fakehms.RawTable path.
var hmsParam = regexp.MustCompile(`^9\{(.*)\}$`)

// deltasyncOwns reports whether a raw difference is one deltasync may
// make: on a parameter it owns (the provider, the schema and partition
// keys, comment, delta.*, its bookkeeping, Trino's cache) or
// transient_lastDdlTime, or the parameters map's size.
func deltasyncOwns(d string) bool {
	path, _, _ := strings.Cut(strings.TrimLeft(d, "+-"), "=")
	path, _, _ = strings.Cut(path, ": ")
	if path == "9" {
		return true
	}
	m := hmsParam.FindStringSubmatch(path)
	if m == nil {
		return false
	}
	switch k := m[1]; {
	case k == hms.KeyDDLTime, k == hms.KeyProvider, k == hms.KeyComment, k == hms.KeySyncedProperties,
		k == hms.KeyTrinoVersion, k == hms.KeyTrinoSchema:
		return true
	case strings.HasPrefix(k, "delta."), strings.HasPrefix(k, hms.KeySchema):
		return true
	}
	return false
}

// TestHMSUnsetStaysUnset: on the real HMS 4.0.1 and 3.1.3, a record as
// Spark registers it (the fields its Java client leaves null not sent at
// all) is compared raw — every field id of the get_table_req reply,
// decoded without generated structs — before and after a real write: a
// saved plan's apply, and a reconcile (`once`). The only differences are
// parameters deltasync owns and transient_lastDdlTime: sd.serdeInfo.name
// and the view texts stay unset, and the server adds no stats.
func TestHMSUnsetStaysUnset(t *testing.T) {
	for _, tg := range hmsTargets {
		if tg.env == "" {
			continue // the fake stores gohive's structs: no unset fields to keep
		}
		t.Run(tg.name, func(t *testing.T) {
			e := newHMSEnv(t, "", tg.env)
			ctx := context.Background()
			raw := func(name string) map[string]string {
				t.Helper()
				m, err := fakehms.RawTable(ctx, e.url, e.db, name)
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			register := func(name string) map[string]string {
				t.Helper()
				_, loc := logTable(t, "deletion_vectors_disabled", name, -1)
				if err := fakehms.CreateTableUnset(ctx, e.url, sparkTable(e.db, name, loc), sparkUnset...); err != nil {
					t.Fatal(err)
				}
				before := raw(name)
				for _, f := range sparkUnset {
					if v, ok := before[f]; ok {
						t.Fatalf("the fixture has %s = %s: it must be unset", f, v)
					}
				}
				return before
			}
			check := func(how, name string, before map[string]string) {
				t.Helper()
				n := 0
				for _, d := range fakehms.RawDiff(before, raw(name)) {
					if !deltasyncOwns(d) {
						t.Errorf("%s changed a field deltasync does not own: %s", how, d)
					}
					n++
				}
				if n == 0 {
					t.Errorf("%s wrote nothing to %s: the test needs a write", how, name)
				}
			}

			before := register("ap")
			if res := applied(t, applyHMS(e, hmsPlan(t, e)), "hive."+e.db+".ap"); res.Outcome != audit.OutcomeSynced {
				t.Fatalf("apply: %+v", res)
			}
			check("apply", "ap", before)

			before = register("on")
			if res := resultOf(t, e.reconciler().Sync(ctx), "hive."+e.db+".on"); res.Outcome != sync.OutcomeSynced {
				t.Fatalf("once: %s %s", res.Outcome, res.Reason)
			}
			check("once", "on", before)
		})
	}
}
