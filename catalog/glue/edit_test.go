package glue

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/google/go-cmp/cmp"
)

// A saved edit (JSON, as plan --out keeps it) applied to the record it was
// computed from gives exactly what Apply gives, for every shape; once
// written, the next plan's edit is empty.
func TestEditOfRoundTrips(t *testing.T) {
	for _, fixture := range []func() *types.Table{sparkTable, athenaTable, crawlerTable, trinoTable} {
		tb := fixture()
		in, err := Apply(tb, desired())
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(EditOf(tb, in))
		if err != nil {
			t.Fatal(err)
		}
		var e Edit
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		if err := e.Check(); err != nil {
			t.Errorf("%s: Check refuses Apply's own edit %s: %v", *tb.Name, b, err)
		}
		if d := cmp.Diff(in, e.ApplyTo(tb), sdkTypes); d != "" {
			t.Errorf("%s: edit %s applied differs from Apply (-apply +edit):\n%s", *tb.Name, b, d)
		}
		if ShapeOf(tb) == ShapeSpark && (e.Columns != nil || e.PartitionKeys != nil) {
			t.Errorf("%s: edit %s changes the columns of a Spark record", *tb.Name, b)
		}
		if ShapeOf(tb) == ShapeAthena && e.Columns == nil {
			t.Errorf("%s: edit %s leaves the Athena columns without the log's comment", *tb.Name, b)
		}
		after := stored(tb, in)
		again, _ := Apply(after, desired())
		if e := EditOf(after, again); !e.Empty() {
			t.Errorf("%s: a second plan is not empty: %+v", *tb.Name, e)
		}
	}
}

func TestEditCheckRefuses(t *testing.T) {
	for _, tc := range []struct {
		e    Edit
		want string
	}{
		{Edit{Set: map[string]string{"EXTERNAL": "FALSE"}}, "EXTERNAL is never changed"},
		{Edit{Remove: []string{KeyTableType}}, "table_type is never changed"},
		{Edit{Set: map[string]string{"spark.sql.create.version": "4"}}, "Spark's"},
		{Edit{Set: map[string]string{KeyProvider: "iceberg"}}, `deltasync writes only "delta"`},
		{Edit{Remove: []string{KeyProvider}}, "keeps its provider"},
		{Edit{Set: map[string]string{"a": "1"}, Remove: []string{"a"}}, "a is set too"},
		{Edit{Set: map[string]string{"": "1"}}, "empty parameter key"},
		{Edit{Columns: &[]Column{{Name: "x"}}}, "columns[0]: name and type"},
	} {
		if err := tc.e.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.e, err, tc.want)
		}
	}
}
