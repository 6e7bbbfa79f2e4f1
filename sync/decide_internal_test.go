package sync

import (
	"testing"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/plan"
)

// TestDecide: each kind of plan gets its verdict, status and reason; a
// catalog without the Delta API flags before the MANAGED and warn rules.
func TestDecide(t *testing.T) {
	external := &plan.Record{Type: uc.TableTypeExternal}
	managed := &plan.Record{Type: uc.TableTypeManaged}
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
		want     ruling
	}{
		{"drift is written", sync, external, props, false, ruling{verdict: verdictWrite}},
		{"lag is written", sync, external, lag, false, ruling{verdict: verdictWrite}},
		{"problems", sync, external, plan.Plan{Problems: []string{"a", "b"}}, false,
			ruling{verdictFlag, StatusUnknown, "cannot compare: a; b", ReasonLog}},
		{"unsupported types", sync, external, plan.Plan{Unsupported: []string{"x: void"}}, false,
			ruling{verdictFlag, StatusOutOfSync, "log has types the catalog cannot store: x: void", ReasonUnsupported}},
		{"location", sync, external, plan.Plan{Location: &plan.ValueChange{Log: "s3://a/t", Catalog: "s3://b/t"}}, false,
			ruling{verdictFlag, StatusOutOfSync, "location differs: s3://a/t vs s3://b/t", ""}},
		{"managed lag", sync, managed, lag, false, ruling{verdict: verdictInSync}},
		{"warn lag", warn, external, lag, false, ruling{verdict: verdictInSync}},
		{"read-only lag", sync, external, lag, true, ruling{verdict: verdictInSync}},
		{"managed drift", sync, managed, props, false, ruling{verdictFlag, StatusOutOfSync, whyManaged, ""}},
		{"warn drift", warn, external, props, false, ruling{verdictFlag, StatusOutOfSync, whyWarn, ""}},
		{"read-only drift", sync, external, props, true, ruling{verdictFlag, StatusOutOfSync, whyReadOnly, ""}},
		{"read-only managed drift", warn, managed, props, true, ruling{verdictFlag, StatusOutOfSync, whyReadOnly, ""}},
		{"read-only problems", sync, external, plan.Plan{Problems: []string{"a"}}, true,
			ruling{verdictFlag, StatusUnknown, "cannot compare: a", ReasonLog}},
	}
	for _, tt := range tests {
		if got := policy(tt.t, tt.rec, tt.p, tt.readOnly); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
