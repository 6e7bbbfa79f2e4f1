package glue

import (
	"strings"
	"testing"
)

// FuzzReadRecord feeds records with arbitrary parameters (what any client
// may have written to Glue): ReadRecord never panics, and a record it
// reads Apply writes into one that reads back as the log's state.
func FuzzReadRecord(f *testing.F) {
	f.Add(KeySchemaNumParts, "2", KeySchemaPart+"0", "{", KeyNumPartCols, "1")
	f.Add(KeyLastUpdateVersion, "-1", KeySyncedProperties, `["a"]`, "a", "b")
	f.Add(KeyTrinoVersion, "10", KeySyncedProperties, `["comment"]`, KeyComment, "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		tb := crawlerTable()
		if strings.HasPrefix(k1, "spark.sql.sources.schema") {
			tb = sparkTable()
		}
		tb.Parameters[k1], tb.Parameters[k2], tb.Parameters[k3] = v1, v2, v3
		if _, err := ReadRecord(tb); err != nil {
			return
		}
		d := desired()
		in, err := Apply(tb, d)
		if err != nil {
			if IsDelta(tb) {
				t.Fatalf("ReadRecord read the record, Apply refused it: %v", err)
			}
			return
		}
		r, err := ReadRecord(stored(tb, in))
		if err != nil {
			t.Fatalf("the written record does not read: %v", err)
		}
		checkOwned(t, r, d)
	})
}

// FuzzParseURL: any catalog URL either parses into a Config that
// validates or is an error naming the URL.
func FuzzParseURL(f *testing.F) {
	f.Add("glue://eu-west-1?catalog_id=123456789012&endpoint=http://127.0.0.1:1")
	f.Add("glue://?region=us-east-1&archive=true")
	f.Fuzz(func(t *testing.T, raw string) {
		cfg, err := ParseURL(raw)
		if err != nil {
			if !strings.Contains(err.Error(), "glue:") {
				t.Fatalf("error %q does not say it is the Glue URL", err)
			}
			return
		}
		if err := cfg.validate(); err != nil {
			t.Fatalf("ParseURL(%q) accepted an invalid config: %v", raw, err)
		}
	})
}
