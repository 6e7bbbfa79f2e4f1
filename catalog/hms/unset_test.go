package hms

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"
	"github.com/deltasync/deltasync/internal/fakehms"
)

// ownedParam reports whether a Table.parameters key is one deltasync
// writes: the keys it owns (Apply's) and transient_lastDdlTime (the
// guard's new value).
func ownedParam(k string) bool {
	switch k {
	case KeyDDLTime, KeyProvider, KeyComment, KeySyncedProperties, KeyTrinoVersion, KeyTrinoSchema:
		return true
	}
	return schemaKey(k) || strings.HasPrefix(k, "delta.")
}

// paramPath is a Table.parameters entry in a RawTable path (field 9).
var paramPath = regexp.MustCompile(`^9\{(.*)\}$`)

// notOwned returns the raw differences that are not deltasync's to make:
// any outside Table.parameters, or on a parameter it does not own.
func notOwned(diff []string) []string {
	var out []string
	for _, d := range diff {
		path, _, _ := strings.Cut(strings.TrimLeft(d, "+-"), "=")
		path, _, _ = strings.Cut(path, ": ")
		if path == "9" { // the parameters map's size
			continue
		}
		if m := paramPath.FindStringSubmatch(path); m != nil && ownedParam(m[1]) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// sparkUnset are the fields a Java client (Spark's Hive client) leaves
// null in a Delta table it registers, which gohive would send as "":
// sd.serdeInfo.name, viewOriginalText, viewExpandedText.
var sparkUnset = []string{"7.7.1", "10", "11"}

// TestUnsetStaysUnset: a write back of a Spark-registered record (the
// reconcile's WriteFrom, and Update) changes no field of the Thrift Table
// deltasync does not own, compared raw — every field id the server sent,
// decoded without generated structs — before and after. A field the read
// did not have stays unset (gohive's structs would send sd.serdeInfo.name
// and the view texts as ""); one it had empty stays empty; and the server
// adds no stats (numFiles, totalSize) to the record.
func TestUnsetStaysUnset(t *testing.T) {
	fixtures := map[string]func(db, name, dbLocation, location string) *hm.Table{
		"spark":       sparkRegistered,
		"spark4-hook": func(db, name, dbl, loc string) *hm.Table { return sparkHive4(db, name, dbl, loc, false, true) },
	}
	for _, s := range servers {
		for fname, fixture := range fixtures {
			t.Run(s.name+"/"+fname, func(t *testing.T) {
				c := metastore(t, s.env)
				ctx := context.Background()
				db := freshDB(t, c)
				url := "thrift://" + c.addr
				if err := fakehms.CreateTableUnset(ctx, url, fixture(db, "ev", "file:/tmp/"+db+".db", "file://"+t.TempDir()), sparkUnset...); err != nil {
					t.Fatal(err)
				}
				before, err := fakehms.RawTable(ctx, url, db, "ev")
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range sparkUnset {
					if v, ok := before[f]; ok {
						t.Fatalf("the fixture has field %s = %s: it must be unset", f, v)
					}
				}
				read, err := c.GetTable(ctx, db, "ev")
				if err != nil {
					t.Fatal(err)
				}
				next, err := Apply(read.Thrift, atVersion(5))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.WriteFrom(ctx, read, next, time.Now(), 5*time.Second); err != nil {
					t.Fatal(err)
				}
				after, err := fakehms.RawTable(ctx, url, db, "ev")
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range notOwned(fakehms.RawDiff(before, after)) {
					t.Errorf("WriteFrom changed a field deltasync does not own: %s", d)
				}
				if _, err := c.Update(ctx, db, "ev", func(s *Table) (*hm.Table, error) { return Apply(s.Thrift, atVersion(6)) }, UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				again, err := fakehms.RawTable(ctx, url, db, "ev")
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range notOwned(fakehms.RawDiff(before, again)) {
					t.Errorf("Update changed a field deltasync does not own: %s", d)
				}
			})
		}
	}
}
