package uc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
)

// logState is a log at version 7 of mappedSchema, partitioned by id and
// clustered by price.
func logState() catalog.LogState {
	return catalog.LogState{
		Version: 7, CommitTimestamp: 1700000000123, SchemaString: mappedSchema, PartitionColumns: []string{"id"},
		Protocol: catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "timestampNtz", "variantType"},
			WriterFeatures: []string{"clustering", "columnMapping", "domainMetadata", "timestampNtz", "variantType"}},
		Configuration: map[string]string{"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "5",
			"owner.team": "data", "delta.minReaderVersion": "3"},
		Description: "the log's", Clustering: [][]string{{"price"}},
	}
}

// isUpdateOf reports whether r is the updateTable of main.s.<table>.
func isUpdateOf(r *http.Request, table string) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/delta/v1/catalogs/main/schemas/s/tables/"+table)
}

// A registration is a createTable of what the log says; Register sends it
// and records the log's version as the watermark. A name taken is an
// error answering catalog.ErrAlreadyExists.
func TestKindRegister(t *testing.T) {
	e := newKindEnv(t)
	ctx := context.Background()
	w, err := e.k.Registration(tn("r"), "file:///data/r", logState())
	if err != nil {
		t.Fatal(err)
	}
	if w.Kind != uc.KindName || !w.Create || w.Table != tn("r") || w.LogVersion != 7 || !slices.Equal(w.Actions, []string{"create-table"}) {
		t.Errorf("write %+v", w)
	}
	var req uc.CreateTableRequest
	if err := json.Unmarshal(w.Request, &req); err != nil || req.LastCommitTimestampMs != 1700000000123 || req.TableType != "EXTERNAL" {
		t.Errorf("request %s: %v", w.Request, err)
	}
	row, err := uc.RegistrationRow(w)
	if err != nil {
		t.Fatal(err)
	}
	want := uc.Registered{Location: "file:///data/r",
		Columns: []string{"id long not null", "price decimal(10,2)",
			`tags {"type":"map","key-type":"string","value-type":{"type":"array","element-type":"timestamp_ntz","contains-null":true},"value-contains-null":false}`,
			`s {"type":"struct","fields":[{"name":"x","type":"variant","nullable":true,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-5e"}}]}`},
		PartitionColumns: []string{"id"}, Clustering: [][]string{{"price"}},
		Properties: map[string]string{"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "5", "owner.team": "data"},
		Comment:    "the log's", Protocol: logState().Protocol}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}

	v, err := e.k.Register(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := e.srv.Table("main.s.r")
	if v == nil || *v != 7 || got.Properties["delta.lastUpdateVersion"] != "7" || got.Location != "file:///data/r" {
		t.Errorf("registered at %v: %+v", v, got)
	}

	_, err = e.k.Register(ctx, w)
	if !errors.Is(err, catalog.ErrAlreadyExists) || !uc.IsAlreadyExists(err) || strings.HasPrefix(err.Error(), "registering") {
		t.Errorf("registered again: %v", err)
	}
}

// A registration the catalog cannot hold is no write: an error answering
// catalog.ErrUnsupported, worded as sync reports it.
func TestKindRegistrationUnsupported(t *testing.T) {
	e := newKindEnv(t)
	void := logState()
	void.SchemaString = `{"type":"struct","fields":[{"name":"x","type":"void","nullable":true,"metadata":{}}]}`
	uniform := logState()
	uniform.Configuration = map[string]string{"delta.universalFormat.enabledFormats": "iceberg"}
	for _, c := range []struct {
		log  catalog.LogState
		want string
	}{
		{void, "registering main.s.r: types the catalog cannot store: x: void"},
		{uniform, "registering main.s.r: UniForm Iceberg tables need uniform metadata, not supported"},
	} {
		w, err := e.k.Registration(tn("r"), "file:///data/r", c.log)
		if w != nil || !errors.Is(err, catalog.ErrUnsupported) || err.Error() != c.want {
			t.Errorf("write %v, err %v; want %q", w, err, c.want)
		}
	}
	elided := logState()
	elided.SchemaString, elided.SchemaIs = "", func(string) bool { return false }
	if _, err := e.k.Registration(tn("r"), "file:///data/r", elided); !errors.Is(err, catalog.ErrUnsupported) ||
		!strings.Contains(err.Error(), "schema string is not at hand") {
		t.Errorf("elided schema: %v", err)
	}
	if _, err := e.k.Registration(tn("r"), "file:///data/r", catalog.LogState{}); !errors.Is(err, catalog.ErrUnsupported) ||
		!strings.HasPrefix(err.Error(), "registering main.s.r: ") {
		t.Errorf("no schema: %v", err)
	}
}

// A create the client refuses before sending (a property key wider than
// Unity Catalog stores) is the client's refusal, carrying its Refusal.
func TestKindRegisterRefused(t *testing.T) {
	e := newKindEnv(t)
	log := logState()
	log.Configuration[strings.Repeat("k", 300)] = "v"
	w, err := e.k.Registration(tn("r"), "file:///data/r", log)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.k.Register(context.Background(), w)
	rf, ok := refusalOf(err)
	if !errors.Is(err, catalog.ErrRefused) || !ok || !rf.PreFlight || strings.HasPrefix(err.Error(), "registering") {
		t.Errorf("err %v, refusal %+v", err, rf)
	}
	if _, ok := e.srv.Table("main.s.r"); ok {
		t.Error("the table was created")
	}
}

// When the watermark cannot be recorded, the new table is deleted again;
// when the update's answer is lost but the record read again holds it,
// the registration stands.
func TestKindRegisterWatermark(t *testing.T) {
	e := newKindEnv(t)
	ctx := context.Background()
	w, err := e.k.Registration(tn("r"), "file:///data/r", logState())
	if err != nil {
		t.Fatal(err)
	}
	e.setIntercept(func(r *http.Request, forward func() (*http.Response, error)) (*http.Response, error) {
		if !isUpdateOf(r, "r") {
			return forward()
		}
		return &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"error":{"message":"no MODIFY","type":"PermissionDeniedException","code":403}}`)), Request: r}, nil
	})
	_, err = e.k.Register(ctx, w)
	if err == nil || !strings.HasPrefix(err.Error(), "registering main.s.r: recording version 7: ") ||
		!strings.HasSuffix(err.Error(), "(the new table was deleted again)") || !uc.IsForbidden(err) {
		t.Errorf("err = %v", err)
	}
	if _, ok := e.srv.Table("main.s.r"); ok {
		t.Error("the new table was not deleted")
	}

	// Every answer to the update lost after the server applied it.
	e.setIntercept(func(r *http.Request, forward func() (*http.Response, error)) (*http.Response, error) {
		if !isUpdateOf(r, "r") {
			return forward()
		}
		resp, err := forward()
		if err == nil {
			resp.Body.Close()
		}
		return nil, errors.New("connection reset by peer")
	})
	v, err := e.k.Register(ctx, w)
	if err != nil || v == nil || *v != 7 {
		t.Fatalf("lost answer: %v, %v", v, err)
	}
	if got, ok := e.srv.Table("main.s.r"); !ok || got.Properties["delta.lastUpdateVersion"] != "7" {
		t.Errorf("the registration does not stand: %v", got.Properties)
	}
}

// Without the Delta API (getConfig 404), a catalog is read with the
// classic getTable from then on, once found (OnReadOnly is told once),
// and every drift of it is flagged (Check's ReadOnly); credentials come
// from the classic API by table id.
func TestKindReadOnlyWithoutDeltaAPI(t *testing.T) {
	e := newKindEnv(t)
	ctx := context.Background()
	created := registerTable(t, e.c, tn("t"), mappedSchema).Metadata
	registerTable(t, e.c, tn("p"), mappedSchema)
	if err := e.srv.MutateTable("main.s.p", func(tb *uctest.Table) { tb.Format = "PARQUET" }); err != nil {
		t.Fatal(err)
	}
	withDelta, err := e.k.Load(ctx, tn("t"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := e.k.Check(catalog.LogState{}, withDelta); c.ReadOnly != "" || c.AnyType {
		t.Errorf("check with the Delta API: %+v", c)
	}

	e.srv.SetDeltaAPI(false)
	read, err := e.k.Load(ctx, tn("t"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if read.ID != created.TableUUID || read.Comment != "registered" || read.Etag != "" ||
		!cmp.Equal(read.Columns, withDelta.Columns) || !slices.Equal(read.PartitionColumns, []string{"id"}) ||
		read.LastCommitVersion == nil || *read.LastCommitVersion != 0 {
		t.Errorf("classic read %+v", read.Record)
	}
	e.srv.ResetRequests()
	if _, err := e.k.Load(ctx, tn("t"), nil); err != nil {
		t.Fatal(err)
	}
	if n := requests(e.srv, "GET", "/delta/v1/"); n != 0 {
		t.Errorf("%d Delta API requests once the catalog is read-only", n)
	}
	if got := e.k.ReadOnlyCatalogs(); !slices.Equal(got, []string{"main"}) || !slices.Equal(e.readOnly, []string{"main"}) {
		t.Errorf("read-only catalogs %v, told %v", got, e.readOnly)
	}
	const why = "catalog has no Delta API: read-only, drift is flagged, never written"
	if c := e.k.Check(catalog.LogState{}, read); c.ReadOnly != why {
		t.Errorf("check %+v", c)
	}
	_, err = e.k.Load(ctx, tn("p"), nil)
	if !errors.Is(err, catalog.ErrNotDelta) || err.Error() != "not a Delta table: data source format PARQUET is not Delta" {
		t.Errorf("a Parquet table read-only: %v", err)
	}

	var body string
	e.setIntercept(func(r *http.Request, forward func() (*http.Response, error)) (*http.Response, error) {
		if !strings.HasSuffix(r.URL.Path, "/temporary-table-credentials") {
			return forward()
		}
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
			Body: io.NopCloser(strings.NewReader(`{"aws_temp_credentials":{"access_key_id":"AK","secret_access_key":"SK","session_token":"ST"},"expiration_time":1900000000000}`))}, nil
	})
	creds, err := e.k.ReadCredentials(ctx, read.Record)
	if err != nil || creds.S3AccessKeyID != "AK" || !strings.Contains(body, created.TableUUID) || !strings.Contains(body, `"READ"`) {
		t.Errorf("classic credentials %v, %v; request %s", creds, err, body)
	}
	noID := read.Record
	noID.ID = ""
	if _, err := e.k.ReadCredentials(ctx, noID); err == nil || !strings.Contains(err.Error(), "no table_id") {
		t.Errorf("no table id: %v", err)
	}
}

// With the Delta API, credentials are getTableCredentials' for the
// record's location.
func TestKindReadCredentials(t *testing.T) {
	e := newKindEnv(t)
	ctx := context.Background()
	registerTable(t, e.c, tn("t"), mappedSchema)
	e.srv.SetCredentialConfig(func(string) map[string]string { return map[string]string{uc.ConfigS3AccessKeyID: "AK"} })
	read, err := e.k.Load(ctx, tn("t"), nil)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := e.k.ReadCredentials(ctx, read.Record)
	if err != nil || creds.S3AccessKeyID != "AK" || creds.Expiration.IsZero() {
		t.Errorf("credentials %v, %v", creds, err)
	}
}
