package change

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/plan"
)

// resolve says synced only for a record that holds every value the write
// set, under the guarded uuid, with the etag moved (or the one the write
// set itself); not_applied when any of that fails or the table is gone;
// unknown only when the record could not be read.
func TestResolveLostWrite(t *testing.T) {
	v7, v6 := int64(7), int64(6)
	cols := catalog.StructType{Fields: []catalog.StructField{{Name: "id", Type: catalog.DataType{Primitive: "long"}, Nullable: true, Metadata: map[string]any{}}}}
	held := func() *plan.Record {
		return &plan.Record{ID: "u1", Etag: "e2", Properties: map[string]string{"a": "1"}, LastCommitVersion: &v7,
			Columns: cols, Comment: "c", PartitionColumns: []string{}}
	}
	comment := "c"
	w := LostWrite{tableID: "u1", etagBefore: "e1", etagMoves: true, edit: &catalog.Edit{
		SetProperties: map[string]string{"a": "1"}, RemoveProperties: []string{"gone"},
		Columns: &cols, Comment: &comment, SetPartitioning: true, PartitionColumns: []string{},
		Version: 7,
	}}
	cases := []struct {
		name    string
		w       LostWrite
		rec     func(*plan.Record)
		readErr error
		want    audit.Outcome
		why     string
	}{
		{"holds the write", w, nil, nil, audit.OutcomeSynced, "etag e2"},
		{"etag unchanged", w, func(r *plan.Record) { r.Etag = "e1" }, nil, audit.OutcomeNotApplied, "still e1"},
		{"another table", w, func(r *plan.Record) { r.ID = "u2" }, nil, audit.OutcomeNotApplied, "another one"},
		{"property not set", w, func(r *plan.Record) { r.Properties["a"] = "0" }, nil, audit.OutcomeNotApplied, "property a"},
		{"property not removed", w, func(r *plan.Record) { r.Properties["gone"] = "x" }, nil, audit.OutcomeNotApplied, "gone is still there"},
		{"watermark behind", w, func(r *plan.Record) { r.LastCommitVersion = &v6 }, nil, audit.OutcomeNotApplied, "watermark is 6"},
		{"columns differ", w, func(r *plan.Record) { r.Columns = catalog.StructType{} }, nil, audit.OutcomeNotApplied, "columns"},
		{"comment differs", w, func(r *plan.Record) { r.Comment = "old" }, nil, audit.OutcomeNotApplied, "comment"},
		{"read failed", w, nil, errors.New("connection refused"), audit.OutcomeUnknown, "could not be read"},
		{"table gone", w, nil, &uc.APIError{Status: 404, Type: "NoSuchTableException"}, audit.OutcomeNotApplied, "gone"},
		{"HMS: the guard value written", LostWrite{tableID: "u1", etagBefore: "e1", written: "e2", edit: w.edit}, nil, nil, audit.OutcomeSynced, ""},
		{"HMS: another guard value", LostWrite{tableID: "u1", etagBefore: "e1", written: "e3", edit: w.edit}, nil, nil, audit.OutcomeNotApplied, "not the e3"},
		{"HMS 3: the etag may stay", LostWrite{tableID: "u1", etagBefore: "e2", edit: w.edit}, nil, nil, audit.OutcomeSynced, ""},
	}
	for _, c := range cases {
		rec := held()
		if c.rec != nil {
			c.rec(rec)
		}
		if c.readErr != nil {
			rec = nil
		}
		got := c.w.Resolve(rec, c.readErr)
		if got.Outcome != c.want || !strings.Contains(got.Why, c.why) {
			t.Errorf("%s: %s (%s), want %s (%q)", c.name, got.Outcome, got.Why, c.want, c.why)
		}
		if (got.Outcome == audit.OutcomeSynced) != (got.EtagAfter != "") {
			t.Errorf("%s: etag after %q with %s", c.name, got.EtagAfter, got.Outcome)
		}
	}
}

// unsure: only a refusal the catalog answered to the write itself is
// sure; a 409 to a resend (catalog.ErrOutcomeUnknown) is not.
func TestUnsure(t *testing.T) {
	conflict := &uc.APIError{Status: 409, Type: uc.TypeUpdateRequirementConflict}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{conflict, false},
		{fmt.Errorf("%w: %w", catalog.ErrOutcomeUnknown, conflict), true},
		{&uc.APIError{Status: 503}, true},
		{errors.New("EOF"), true},
		{fmt.Errorf("x: %w", hms.ErrConflict), false},
		{fmt.Errorf("x: %w", catalog.ErrRefused), false},
	} {
		if got := Unsure(c.err); got != c.want {
			t.Errorf("Unsure(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
