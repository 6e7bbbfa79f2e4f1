package sync

import (
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/plan"
)

// TestDecide: each kind of plan gets its verdict, status and reason; a
// catalog without the Delta API flags before the MANAGED and warn rules.
func TestDecide(t *testing.T) {
	external := &plan.Record{Type: catalog.TableTypeExternal}
	managed := &plan.Record{Type: catalog.TableTypeManaged}
	v := int64(3)
	lag := plan.Plan{Version: &plan.VersionChange{Log: 4, Catalog: &v}}
	props := plan.Plan{Properties: &plan.PropertiesChange{Remove: []string{"stray"}}}
	sync, warn := Target{Mode: ModeSync}, Target{Mode: ModeWarn}
	tests := []struct {
		name     string
		t        Target
		rec      *plan.Record
		p        plan.Plan
		readOnly bool
		want     decision
	}{
		{"drift is written", sync, external, props, false, decision{verdict: verdictWrite}},
		{"lag is written", sync, external, lag, false, decision{verdict: verdictWrite}},
		{"problems", sync, external, plan.Plan{Problems: []string{"a", "b"}}, false,
			decision{verdictFlag, StatusUnknown, "cannot compare: a; b", ReasonLog}},
		{"unsupported types", sync, external, plan.Plan{Unsupported: []string{"x: void"}}, false,
			decision{verdictFlag, StatusOutOfSync, "log has types the catalog cannot store: x: void", ReasonUnsupported}},
		{"location", sync, external, plan.Plan{Location: &plan.ValueChange{Log: "s3://a/t", Catalog: "s3://b/t"}}, false,
			decision{verdictFlag, StatusOutOfSync, "location differs: s3://a/t vs s3://b/t", ""}},
		{"managed lag", sync, managed, lag, false, decision{verdict: verdictInSync}},
		{"warn lag", warn, external, lag, false, decision{verdict: verdictInSync}},
		{"read-only lag", sync, external, lag, true, decision{verdict: verdictInSync}},
		{"managed drift", sync, managed, props, false, decision{verdictFlag, StatusOutOfSync, whyManaged, ""}},
		{"warn drift", warn, external, props, false, decision{verdictFlag, StatusOutOfSync, whyWarn, ""}},
		{"read-only drift", sync, external, props, true, decision{verdictFlag, StatusOutOfSync, whyReadOnly, ""}},
		{"read-only managed drift", warn, managed, props, true, decision{verdictFlag, StatusOutOfSync, whyReadOnly, ""}},
		{"read-only problems", sync, external, plan.Plan{Problems: []string{"a"}}, true,
			decision{verdictFlag, StatusUnknown, "cannot compare: a", ReasonLog}},
	}
	for _, tt := range tests {
		if got := decide(tt.t, tt.rec, tt.p, tt.readOnly); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
