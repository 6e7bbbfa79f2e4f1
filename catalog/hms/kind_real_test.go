package hms

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
)

// realServers are the real metastores the Kind's tests run against.
var realServers = []struct{ name, env string }{{"hms4", "DELTASYNC_HMS4_URL"}, {"hms3", "DELTASYNC_HMS3_URL"}}

// inSync checks that the record read is the log's at log.Version.
func inSync(t *testing.T, k *Kind, read *catalog.Read, log catalog.LogState) {
	t.Helper()
	if v := read.LastCommitVersion; v == nil || *v != log.Version {
		t.Errorf("record at version %v, want %d", v, log.Version)
	}
	if ts := read.LastCommitTimestampMs; ts == nil || *ts != log.CommitTimestamp {
		t.Errorf("record's commit timestamp %v, want %d", ts, log.CommitTimestamp)
	}
	if !log.SchemaIsCatalogs(&read.Record) {
		s, _ := read.ColumnsAsLog()
		t.Errorf("record's schema %s, want the log's", s)
	}
	if read.Properties["delta.enableDeletionVectors"] != "true" || read.Protocol == nil || read.Protocol.MinWriterVersion != 2 {
		t.Errorf("record's properties %v, protocol %+v", read.Properties, read.Protocol)
	}
	if c := k.Check(log, read); c.Unsupported != nil || c.Schema != "" {
		t.Errorf("Check of the record written: %+v", c)
	}
}

// TestKindWriteReal: on the real HMS 4.0.1 and 3.1.3, a record Spark
// registered is loaded, prepared and sent, and reads back as the log's;
// on HMS 4 the etag Send returns is the record's now (HMS 3 sets it
// itself: ""). The same write sent again finds the record moved: stale,
// catalog.ErrConflict, nothing written.
func TestKindWriteReal(t *testing.T) {
	for _, s := range realServers {
		t.Run(s.name, func(t *testing.T) {
			c := metastore(t, s.env)
			ctx := context.Background()
			db, _ := sparkTable(t, c)
			k := NewKind(c, KindOptions{})
			name := catalog.TableName{Catalog: "hive", Schema: db, Table: "ev"}
			read, err := k.Load(ctx, name, nil)
			if err != nil {
				t.Fatal(err)
			}
			log := logAt(3)
			w, err := k.Prepare(read, log, edited(log))
			if err != nil {
				t.Fatal(err)
			}
			if w.Kind != KindName || w.Table != name || w.TableID != read.ID || w.Etag != read.Etag || w.LogVersion != 3 || w.Create ||
				strings.Join(w.Actions, ",") != "set-protocol,set-properties,update-metadata-snapshot-version" {
				t.Errorf("Prepare: %+v", w)
			}
			sent, err := k.Send(ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			after, err := k.Load(ctx, name, nil)
			if err != nil {
				t.Fatal(err)
			}
			inSync(t, k, after, log)
			guarded, _ := c.HasExpectedParameterGuard(ctx)
			if sent.Own || (guarded && sent.Etag != after.Etag) || (!guarded && sent.Etag != "") {
				t.Errorf("Sent %+v; the record's etag is %s", sent, after.Etag)
			}
			_, err = k.Send(ctx, w)
			if !errors.Is(err, ErrStaleRecord) || !errors.Is(err, catalog.ErrConflict) {
				t.Errorf("the write sent again: %v, want stale", err)
			}
			again, err := k.Load(ctx, name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if again.Etag != after.Etag || again.UpdatedTime != after.UpdatedTime {
				t.Errorf("a stale write changed the record (etag %s → %s)", after.Etag, again.Etag)
			}
		})
	}
}

// TestKindStaleReal: another writer's edit between Prepare and Send — one
// that sends transient_lastDdlTime back as read (a raw Thrift client,
// Trino) or one that lets the server move it (Hive's client) — makes the
// write stale (catalog.ErrConflict) and leaves the record as that writer
// left it.
func TestKindStaleReal(t *testing.T) {
	for _, s := range realServers {
		for _, ow := range otherWriters {
			t.Run(s.name+"/"+ow.name, func(t *testing.T) {
				c := metastore(t, s.env)
				ctx := context.Background()
				db := versioned(t, c, 4)
				k := NewKind(c, KindOptions{})
				name := catalog.TableName{Catalog: "hive", Schema: db, Table: "ev"}
				read, err := k.Load(ctx, name, nil)
				if err != nil {
					t.Fatal(err)
				}
				log := logAt(6)
				w, err := k.Prepare(read, log, edited(log))
				if err != nil {
					t.Fatal(err)
				}
				otherWrite(t, c, db, "ev", ow.keepDDL)
				_, err = k.Send(ctx, w)
				if !errors.Is(err, ErrStaleRecord) || !errors.Is(err, catalog.ErrConflict) {
					t.Fatalf("Send after another writer: %v, want stale", err)
				}
				if ow.keepDDL && !strings.Contains(err.Error(), "record_fingerprint") {
					t.Errorf("stale with the etag as read: %v, want the fingerprint named", err)
				}
				got, err := c.GetTable(ctx, db, "ev")
				if err != nil {
					t.Fatal(err)
				}
				if p := got.Thrift.Parameters; p[KeyLastUpdateVersion] != "5" || p["owner.team"] != "data-eng" {
					t.Errorf("the other writer's record was changed: version %q, owner.team %q", p[KeyLastUpdateVersion], p["owner.team"])
				}
			})
		}
	}
}

// TestKindSavedWriteReal is the saved-plan path: a Write prepared by one
// Kind is marshalled to JSON (what a plan file keeps), read back in
// another process (a new client and Kind, nothing shared in memory), and
// sent: the record reads as the log's. Its request is the edit and the
// fingerprint, nothing else.
func TestKindSavedWriteReal(t *testing.T) {
	for _, s := range realServers {
		t.Run(s.name, func(t *testing.T) {
			c := metastore(t, s.env)
			ctx := context.Background()
			db, _ := sparkTable(t, c)
			name := catalog.TableName{Catalog: "hive", Schema: db, Table: "ev"}
			planner := NewKind(c, KindOptions{})
			read, err := planner.Load(ctx, name, nil)
			if err != nil {
				t.Fatal(err)
			}
			log := logAt(2)
			w, err := planner.Prepare(read, log, edited(log))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(w)
			if err != nil {
				t.Fatal(err)
			}
			var req map[string]json.RawMessage
			if err := json.Unmarshal(w.Request, &req); err != nil || len(req) != 2 || req["record_fingerprint"] == nil || req["edit"] == nil {
				t.Errorf("request %s: want record_fingerprint and edit", w.Request)
			}

			applier := metastore(t, s.env)
			var saved catalog.Write
			if err := json.Unmarshal(b, &saved); err != nil {
				t.Fatal(err)
			}
			saved.Table = name // the plan keeps the name beside it
			if _, err := NewKind(applier, KindOptions{}).Send(ctx, &saved); err != nil {
				t.Fatalf("sending the saved write: %v\n%s", err, b)
			}
			after, err := planner.Load(ctx, name, nil)
			if err != nil {
				t.Fatal(err)
			}
			inSync(t, planner, after, log)
		})
	}
}

// TestKindRegisterReal: a registration is built from the log's state,
// kept as JSON and sent: the record created holds the log (in sync at its
// version, at the location, Spark's placeholder sd.location under the
// database's). A second registration of the name answers
// catalog.ErrAlreadyExists naming where the table is; a log property named
// like a metastore key is refused before anything is sent.
func TestKindRegisterReal(t *testing.T) {
	for _, s := range realServers {
		t.Run(s.name, func(t *testing.T) {
			c := metastore(t, s.env)
			ctx := context.Background()
			db := freshDB(t, c)
			k := NewKind(c, KindOptions{})
			if sc, err := k.Schemas(ctx, "HIVE"); err != nil || !sc[db] {
				t.Errorf("Schemas(hive): %v, %v; want %s in it", sc, err, db)
			}
			if sc, err := k.Schemas(ctx, "main"); sc != nil || err != nil {
				t.Errorf("Schemas(main): %v, %v; want none", sc, err)
			}
			name := catalog.TableName{Catalog: "hive", Schema: db, Table: "reg"}
			loc := "file://" + t.TempDir()
			log := logAt(7)
			w, err := k.Registration(name, loc, log)
			if err != nil {
				t.Fatal(err)
			}
			if !w.Create || w.Kind != KindName || w.LogVersion != 7 {
				t.Errorf("Registration: %+v", w)
			}
			b, _ := json.Marshal(w)
			var saved catalog.Write
			if err := json.Unmarshal(b, &saved); err != nil {
				t.Fatal(err)
			}
			saved.Table = name
			v, err := k.Register(ctx, &saved)
			if err != nil || v == nil || *v != 7 {
				t.Fatalf("Register: %v, %v", v, err)
			}
			read, err := k.Load(ctx, name, nil)
			if err != nil {
				t.Fatal(err)
			}
			inSync(t, k, read, log)
			if read.Location != loc || read.Type != catalog.TableTypeExternal {
				t.Errorf("registered at %s (%s), want %s EXTERNAL", read.Location, read.Type, loc)
			}
			if sd := read.Answer.(*Table).Thrift.Sd.Location; !strings.HasSuffix(sd, "/reg-__PLACEHOLDER__") {
				t.Errorf("sd.location %s, want Spark's placeholder", sd)
			}
			var pages []catalog.Listed
			if err := k.Tables(ctx, "hive", db, func(p []catalog.Listed) error { pages = append(pages, p...); return nil }); err != nil ||
				len(pages) != 1 || pages[0].Name != name || pages[0].Location != loc || pages[0].NotDelta != "" {
				t.Errorf("Tables: %+v, %v", pages, err)
			}

			_, err = k.Register(ctx, &saved)
			if !errors.Is(err, catalog.ErrAlreadyExists) || !strings.Contains(err.Error(), "create_table") {
				t.Errorf("registering the name again: %v, want ErrAlreadyExists at %s", err, loc)
			}
			bad := logAt(7)
			bad.Configuration = map[string]string{"spark.sql.x": "1", "numFiles": "3"}
			_, err = k.Registration(catalog.TableName{Catalog: "hive", Schema: db, Table: "bad"}, loc, bad)
			if err == nil || !strings.Contains(err.Error(), "log properties numFiles, spark.sql.x are metastore keys") {
				t.Errorf("Registration with metastore keys: %v", err)
			}
			if err := k.CreateSchema(ctx, name); err != nil {
				t.Errorf("CreateSchema of an existing database: %v", err)
			}
		})
	}
}

// TestKindListReal: the listing of a real metastore emits a database's
// Delta tables with their records and its other tables as not Delta.
func TestKindListReal(t *testing.T) {
	for _, s := range realServers {
		t.Run(s.name, func(t *testing.T) {
			c := metastore(t, s.env)
			ctx := context.Background()
			db, _ := sparkTable(t, c)
			p := sparkRegistered(db, "pq", "file:/tmp/"+db+".db", "file://"+t.TempDir())
			p.Parameters[KeyProvider] = "parquet"
			if err := c.CreateExternalTable(ctx, p); err != nil {
				t.Fatal(err)
			}
			k := NewKind(c, KindOptions{})
			got, err := collect(t, k, scope{catalogs: []string{"hive"}, schema: func(s string) bool { return s == db }})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Name.Table != "ev" || got[0].NotDelta != "" || got[0].Answer == nil ||
				got[1].Name.Table != "pq" || got[1].NotDelta != "provider parquet is not Delta" {
				t.Fatalf("listed %+v", got)
			}
			read, err := k.Load(ctx, got[0].Name, &got[0])
			if err != nil || read.ID != got[0].ID || read.UpdatedTime != got[0].UpdatedAt {
				t.Errorf("Load from the listing: %+v, %v", read, err)
			}
		})
	}
}
