package uc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
)

func TestRefusedClassifiesStatuses(t *testing.T) {
	cases := []struct {
		status  int
		typ     string
		message string
		refused bool
	}{
		{400, "InvalidParameterValueException", "Duplicate field name (case-insensitive)", true},
		{400, "UnsupportedTableFormatException", "not a Delta table", true},
		{405, "", "Method Not Allowed", true},
		{413, "", "Payload Too Large", true},
		{422, "", "", true},
		{401, "NotAuthorizedException", "", false},
		{403, "PermissionDeniedException", "", false},
		{404, "NoSuchTableException", "", false},
		{408, "", "", false},
		{409, "UpdateRequirementConflictException", "assert-etag failed", false},
		{429, "", "", false},
		{500, "InternalServerErrorException", `could not execute statement [Value too long for column "NAME CHARACTER VARYING(255)"`, true},
		{500, "InternalServerErrorException", "NullPointerException", false},
		{503, "", "", false},
	}
	for _, c := range cases {
		err := fmt.Errorf("wrapped: %w", &uc.APIError{Status: c.status, Type: c.typ, Message: c.message, Operation: "updateTable"})
		if got := errors.Is(err, catalog.ErrRefused); got != c.refused {
			t.Errorf("%d %s %q: refused = %v, want %v", c.status, c.typ, c.message, got, c.refused)
		}
		r, ok := uc.AsRefusal(err)
		if ok != c.refused {
			t.Errorf("%d: AsRefusal ok = %v", c.status, ok)
		}
		if ok && (r.Status != c.status || r.Message != c.message || r.Operation != "updateTable") {
			t.Errorf("%d: AsRefusal = %+v", c.status, r)
		}
		if c.refused && uc.Retryable(err) {
			t.Errorf("%d %q: a refusal is retried", c.status, c.message)
		}
	}
}

// A 500 "Value too long for column" is the same answer to the same request
// every time: it is sent once, not MaxAttempts times.
func TestValueTooLongIsNotRetried(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		fmt.Fprint(w, `{"error":{"message":"Failed to update table a.b.c: could not execute statement [Value too long for column \"PROPERTY_KEY CHARACTER VARYING(255)\"]","type":"InternalServerErrorException","code":500}}`)
	}))
	defer srv.Close()
	c, err := uc.New(srv.URL+"/api/2.1/unity-catalog", uc.Options{
		Limits: &uc.Limits{}, // no pre-flight: let the server answer
		Retry:  uc.RetryPolicy{Sleep: func(_ context.Context, _ time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.UpdateTable(context.Background(), catalog.TableName{Catalog: "a", Schema: "b", Table: "c"}, uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: "u"}},
		Updates:      []uc.Update{uc.SetProperties{Updates: map[string]string{"k": "v"}}},
	})
	if !errors.Is(err, catalog.ErrRefused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if n.Load() != 1 {
		t.Errorf("sent %d times, want 1", n.Load())
	}
	if r, _ := uc.AsRefusal(err); r.Type != catalog.TypeValueTooLong || r.PreFlight {
		t.Errorf("refusal %+v", r)
	}
}

func TestLimitsCheckUpdate(t *testing.T) {
	l := uc.UCLimits
	x := func(n int) string { return strings.Repeat("x", n) }
	col := func(name, comment string) uc.SetColumns {
		md := map[string]any{}
		if comment != "" {
			md["comment"] = comment
		}
		return uc.SetColumns{Columns: catalog.StructType{Fields: []catalog.StructField{{Name: name, Type: catalog.DataType{Primitive: "long"}, Metadata: md}}}}
	}
	nested := uc.SetColumns{Columns: catalog.StructType{Fields: []catalog.StructField{{Name: "s",
		Type: catalog.DataType{Struct: &catalog.StructType{Fields: []catalog.StructField{{Name: x(300), Type: catalog.DataType{Primitive: "long"}}}}}}}}}
	clustering := func(n int) uc.SetDomainMetadata {
		c := [][]string{{x(n)}}
		return uc.SetDomainMetadata{Clustering: &c}
	}
	cases := []struct {
		name string
		up   uc.Update
		what string // "" means accepted
	}{
		{"key at 255", uc.SetProperties{Updates: map[string]string{x(255): "v"}}, ""},
		{"key over 255", uc.SetProperties{Updates: map[string]string{x(256): "v"}}, "property key"},
		{"value over 255", uc.SetProperties{Updates: map[string]string{"k": x(256)}}, `value of property "k"`},
		{"255 two-byte characters", uc.SetProperties{Updates: map[string]string{"k": strings.Repeat("é", 255)}}, ""},
		{"128 characters outside the BMP are 256 code units", uc.SetProperties{Updates: map[string]string{"k": strings.Repeat("😀", 128)}}, `value of property "k"`},
		{"table comment at 65535", uc.SetTableComment{Comment: x(65535)}, ""},
		{"table comment over 65535", uc.SetTableComment{Comment: x(65536)}, "table comment"},
		{"column name over 255", col(x(256), ""), "column name"},
		{"column comment over 65535", col("c", x(65536)), `comment of column "c"`},
		{"nested field name is not bounded", nested, ""},
		{"clustering property at 255", clustering(255 - len(`[[""]]`)), ""},
		{"clustering property over 255", clustering(256 - len(`[[""]]`)), "delta.clustering"},
		{"protocol feature key over 255", uc.SetProtocol{Protocol: catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, WriterFeatures: []string{x(242)}}}, "protocol feature"},
	}
	for _, c := range cases {
		err := l.CheckUpdate(uc.UpdateTableRequest{Updates: []uc.Update{c.up}})
		switch {
		case c.what == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.what != "" && (err == nil || !strings.Contains(err.Error(), c.what) || !errors.Is(err, catalog.ErrRefused)):
			t.Errorf("%s: err = %v, want a refusal naming %s", c.name, err, c.what)
		}
	}
	if err := (uc.Limits{}).CheckUpdate(uc.UpdateTableRequest{Updates: []uc.Update{uc.SetTableComment{Comment: x(70000)}}}); err != nil {
		t.Errorf("zero Limits check nothing: %v", err)
	}
}

// runRefusals sends updates the server refuses through the Client: each
// error is a refusal carrying the server's type and message; a value wider
// than the server stores is refused before it is sent (no request), and,
// with the check off, the server's 500 is a refusal sent once.
func runRefusals(t *testing.T, base string, token string) {
	ctx := context.Background()
	var sent atomic.Int32
	opts := func(l *uc.Limits) uc.Options {
		o := uc.Options{Version: "test", Limits: l, Observer: func(op string, _ int, _ time.Duration, _ error) {
			if op == "updateTable" {
				sent.Add(1)
			}
		}}
		if token != "" {
			o.Token = uc.StaticToken(token)
		}
		return o
	}
	c, err := uc.New(base, opts(nil))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := uc.New(base, opts(&uc.Limits{}))
	cat := fmt.Sprintf("dsrefuse_%d", time.Now().UnixNano())
	if _, err := c.CreateCatalog(ctx, uc.CreateCatalogRequest{Name: cat}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteCatalog(context.Background(), cat, true) })
	if _, err := c.CreateSchema(ctx, uc.CreateSchemaRequest{Name: "s", CatalogName: cat}); err != nil {
		t.Fatal(err)
	}
	name := catalog.TableName{Catalog: cat, Schema: "s", Table: "t"}
	long := catalog.StructField{Name: "id", Type: catalog.DataType{Primitive: "long"}, Metadata: map[string]any{}}
	created, err := c.CreateTable(ctx, cat, "s", uc.CreateTableRequest{
		Name: "t", Location: "file://" + t.TempDir() + "/t", TableType: uc.TableTypeExternal,
		Columns: catalog.StructType{Fields: []catalog.StructField{long}}, Protocol: catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		LastCommitTimestampMs: 1700000000000,
	})
	if err != nil {
		t.Fatal(err)
	}
	md := created.Metadata
	req := func(u uc.Update) uc.UpdateTableRequest {
		return uc.UpdateTableRequest{Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: md.TableUUID}, uc.AssertEtag{Etag: md.Etag}}, Updates: []uc.Update{u}}
	}
	cols := func(fs ...catalog.StructField) uc.Update {
		return uc.SetColumns{Columns: catalog.StructType{Fields: fs}}
	}
	named := func(n string) catalog.StructField { f := long; f.Name = n; return f }
	dec := named("d")
	dec.Type = catalog.DataType{Primitive: "decimal(39,2)"}
	for _, c400 := range []struct {
		name, msg string
		up        uc.Update
	}{
		{"case-insensitive duplicate", "Duplicate field name (case-insensitive)", cols(named("id"), named("ID"))},
		{"empty name", "name is required", cols(named(""))},
		{"decimal precision", "precision must be in [0, 38]", cols(dec)},
		{"partition column", "partition-columns references unknown column: nope", uc.SetPartitionColumns{Columns: []string{"nope"}}},
		{"unknown domain", "Unknown domain in remove-domain-metadata: nope", uc.RemoveDomainMetadata{Domains: []string{"nope"}}},
	} {
		_, err := c.UpdateTable(ctx, name, req(c400.up))
		r, ok := uc.AsRefusal(err)
		if !ok || r.Status != 400 || r.Type != "InvalidParameterValueException" || !strings.Contains(r.Message, c400.msg) || r.PreFlight {
			t.Errorf("%s: err = %v, refusal %+v", c400.name, err, r)
		}
		// The server's message names the action; with another action in
		// the request, the refused one is still told apart.
		both := req(c400.up)
		both.Updates = append(both.Updates, uc.SetTableComment{Comment: "c"})
		if r.Action != c400.up.Action() || uc.RefusedAction(r, both) != c400.up.Action() {
			t.Errorf("%s: refusal action %q, RefusedAction %q, want %s", c400.name, r.Action, uc.RefusedAction(r, both), c400.up.Action())
		}
	}
	tooLong := uc.SetProperties{Updates: map[string]string{strings.Repeat("k", 256): "v"}}
	sent.Store(0)
	_, err = c.UpdateTable(ctx, name, req(tooLong))
	if r, ok := uc.AsRefusal(err); !ok || !r.PreFlight || sent.Load() != 0 {
		t.Errorf("pre-flight: err = %v, refusal %+v, %d requests sent", err, r, sent.Load())
	}
	_, err = raw.UpdateTable(ctx, name, req(tooLong))
	if r, ok := uc.AsRefusal(err); !ok || r.Status != 500 || r.Type != catalog.TypeValueTooLong || sent.Load() != 1 {
		t.Errorf("without pre-flight: err = %v, refusal %+v, %d requests sent (want 1)", err, r, sent.Load())
	}
	after, err := c.LoadTable(ctx, name)
	if err != nil || after.Metadata.Etag != md.Etag {
		t.Errorf("a refused update changed the record: %v, etag %s -> %s", err, md.Etag, after.Metadata.Etag)
	}
}

// TestRefusedActionFromServerMessages reads the refused action from the
// messages a real Unity Catalog server (0.6.0) answers (taken verbatim
// from it) and from the guarded test server, the name the message gives
// before any guess from its words.
func TestRefusedActionFromServerMessages(t *testing.T) {
	all := uc.UpdateTableRequest{Updates: []uc.Update{
		uc.SetColumns{}, uc.SetPartitionColumns{}, uc.SetProperties{}, uc.RemoveProperties{},
		uc.SetDomainMetadata{}, uc.RemoveDomainMetadata{}, uc.SetTableComment{}, uc.SetProtocol{},
	}}
	for _, c := range []struct {
		status     int
		msg, named string // named: what the message names ("" none)
		want       string // RefusedAction over all
	}{
		{400, "Duplicate field name (case-insensitive) in columns.fields[1]: ID", "set-columns", "set-columns"},
		{400, "columns.fields[0].name is required.", "set-columns", "set-columns"},
		{400, "columns.fields[0].type.precision must be in [0, 38], got 39.", "set-columns", "set-columns"},
		{400, "columns.fields[0].type: Unsupported Delta primitive type: nosuchtype", "set-columns", "set-columns"},
		{400, "partition-columns references unknown column: nope", "set-partition-columns", "set-partition-columns"},
		{400, "partition-columns contains duplicate entry (case-insensitive): ID", "set-partition-columns", "set-partition-columns"},
		// The old text match knew "domain metadata" and "set-domain-metadata" only.
		{400, "Unknown domain in remove-domain-metadata: nope", "remove-domain-metadata", "remove-domain-metadata"},
		// The refused value is the writer's: a partition column named like
		// an action does not make the message name that action.
		{400, "partition-columns references unknown column: set-columns", "set-partition-columns", "set-partition-columns"},
		// The old text match took "column mapping" for set-columns first.
		{400, "set-properties: delta.columnMapping.mode cannot be changed: column mapping is fixed", "set-properties", "set-properties"},
		{400, "set-properties and remove-properties overlap on keys: [k]", "", ""},
		{500, `Failed to update table columns.s.t: could not execute statement [Value too long for column "PROPERTY_KEY CHARACTER VARYING(255)": "'kkkk... (256)"]`, "", "set-properties"},
		{400, "Cannot rename or drop column id: the table does not use column mapping.", "", "set-columns"},
		{400, "Update to Delta domain metadata delta.clustering is not allowed", "", "set-domain-metadata"},
	} {
		err := &uc.APIError{Status: c.status, Type: "InvalidParameterValueException", Message: c.msg, Operation: "updateTable"}
		r, ok := uc.AsRefusal(err)
		if !ok {
			t.Fatalf("%q is not a refusal", c.msg)
		}
		if r.Action != c.named {
			t.Errorf("%q: refusal names %q, want %q", c.msg, r.Action, c.named)
		}
		if got := uc.RefusedAction(r, all); got != c.want {
			t.Errorf("%q: RefusedAction %q, want %q", c.msg, got, c.want)
		}
		if got := uc.RefusedAction(r, uc.UpdateTableRequest{Updates: []uc.Update{uc.SetTableComment{}}}); got != "" {
			t.Errorf("%q: RefusedAction %q for a request without it", c.msg, got)
		}
	}
}

func TestRefusalsUCTest(t *testing.T) {
	srv := spectest.NewForTest(t)
	runRefusals(t, srv.URL(), "")
}

func TestRefusalsRealServer(t *testing.T) {
	url := os.Getenv("DELTASYNC_UC_URL")
	if url == "" {
		if os.Getenv("DELTASYNC_REQUIRE_UC") == "1" {
			t.Fatal("DELTASYNC_UC_URL is not set (no real Unity Catalog server; see .ci/setup-uc.sh)")
		}
		t.Skip("DELTASYNC_UC_URL not set: no real Unity Catalog server (see .ci/setup-uc.sh)")
	}
	runRefusals(t, url, os.Getenv("DELTASYNC_UC_TOKEN"))
}
