package sync_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/deltasync/deltasync/sync"
)

// The corpus's checkpoint-v2-table has an identity column whose
// delta.identity.highWaterMark moves on every insert (10 at v1, 11, 21,
// 22 at v4, ... 44 at v9), each a metaData action in a data-only commit.
// Such a commit moves only the watermark; before, each one sent
// set-columns. Against the real server when DELTASYNC_UC_URL is set.
func TestIdentityHighWaterMarkIsNotSchemaDrift(t *testing.T) {
	e := newEnv(t)
	dir := e.register("checkpoint-v2-table", "ident", 1)
	steps := []struct {
		upTo int64
		want []string
	}{
		{2, []string{"update-metadata-snapshot-version"}},
		{4, []string{"update-metadata-snapshot-version"}},
		// v5 adds delta.checkpointInterval; v6 and v8 are v2 checkpoints
		// with sidecars.
		{-1, []string{"set-properties", "update-metadata-snapshot-version"}},
	}
	for _, s := range steps {
		copyLog(t, "checkpoint-v2-table", dir, s.upTo)
		rep := e.reconciler(only(e, "ident")).Sync(context.Background())
		res := rep.Results[0]
		if res.Outcome != sync.OutcomeSynced || !slices.Equal(res.Actions, s.want) {
			t.Fatalf("up to v%d: %s, actions %v, want synced with %v\n%s", s.upTo, res.Outcome, res.Actions, s.want, reportText(rep))
		}
	}
	if rep := e.reconciler(only(e, "ident")).Sync(context.Background()); rep.Results[0].Outcome != sync.OutcomeUnchanged {
		t.Errorf("after the sync: %s\n%s", rep.Results[0].Outcome, reportText(rep))
	}
	// The catalog keeps the high-water mark it was registered with.
	rec := e.record("ident")
	if hwm := catalogNumber(rec.Columns.Fields[0].Metadata["delta.identity.highWaterMark"]); hwm != "10" {
		t.Errorf("catalog high-water mark %s, want 10 (never rewritten for it)", hwm)
	}
}

// A real schema change still sends set-columns, with the log's field
// metadata as it is (the high-water mark included); ignore_field_metadata
// adds keys to leave out of the comparison.
func TestIgnoreFieldMetadata(t *testing.T) {
	const schema = `{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{"x.seen":%s,"delta.identity.highWaterMark":%s}}%s]}`
	withMeta := func(seen, hwm, extra string) map[string]any {
		return metaData(fmt.Sprintf(schema, seen, hwm, extra), "", map[string]string{})
	}
	for _, c := range []struct {
		name   string
		ignore []string
		v3     map[string]any
		want   []string
		hwm    string // the high-water mark the catalog holds after v3
	}{
		{"volatile key compared by default", nil, withMeta("2", "8", ""), []string{"set-columns", "update-metadata-snapshot-version"}, "8"},
		{"volatile key ignored", []string{"x.*"}, withMeta("2", "8", ""), []string{"update-metadata-snapshot-version"}, "5"},
		{"a new column is a schema change", []string{"x.*"}, withMeta("2", "9", `,{"name":"added","type":"long","nullable":true,"metadata":{}}`), []string{"set-columns", "update-metadata-snapshot-version"}, "9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := uctestEnv(t)
			dir := e.register("delta-0.8.0", "t", -1)
			writeCommit(t, dir, 2, withMeta("1", "5", ""))
			if rep := e.reconciler(only(e, "t")).Sync(context.Background()); rep.Results[0].Outcome != sync.OutcomeSynced {
				t.Fatalf("v2: %s", reportText(rep))
			}
			writeCommit(t, dir, 3, c.v3)
			rep := e.reconciler(only(e, "t"), func(o *sync.Options) { o.Diff.IgnoreFieldMetadata = c.ignore }).Sync(context.Background())
			if res := rep.Results[0]; res.Outcome != sync.OutcomeSynced || !slices.Equal(res.Actions, c.want) {
				t.Fatalf("%s, actions %v, want %v\n%s", res.Outcome, res.Actions, c.want, reportText(rep))
			}
			md := e.record("t").Columns.Fields[0].Metadata
			if got := catalogNumber(md["delta.identity.highWaterMark"]); got != c.hwm {
				t.Errorf("catalog high-water mark %s, want %s", got, c.hwm)
			}
		})
	}
}

func catalogNumber(v any) string {
	if s, ok := v.(interface{ String() string }); ok {
		return s.String()
	}
	return ""
}
