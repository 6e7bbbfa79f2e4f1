package uc

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/google/go-cmp/cmp"
)

func TestCredentials(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.URL.Query().Get("operation") != "READ" {
			writeJSON(w, 400, `{"error":{"message":"bad op","type":"InvalidParameterValueException","code":400}}`)
			return
		}
		writeJSON(w, 200, `{"storage-credentials":[
		  {"prefix":"s3://bucket/","operation":"READ","expiration-time-ms":1700000000000,"config":{"s3.access-key-id":"AK0","s3.secret-access-key":"SK0","s3.session-token":"ST0"}},
		  {"prefix":"s3://bucket/tables/t","operation":"READ","expiration-time-ms":1700000000000,"config":{"s3.access-key-id":"AK1","s3.secret-access-key":"SK1","s3.session-token":"ST1","azure.sas-token":null}},
		  {"prefix":"s3://bucket/tables/t2","operation":"READ","expiration-time-ms":1,"config":{"s3.access-key-id":"AK2"}}]}`)
	})
	c := newClient(t, ts.URL, Options{})
	got, err := c.ReadCredentials(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}, "s3://bucket/tables/t/")
	if err != nil {
		t.Fatal(err)
	}
	want := Credentials{S3AccessKeyID: "AK1", S3SecretAccessKey: "SK1", S3SessionToken: "ST1", Expiration: time.UnixMilli(1700000000000)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s := fmt.Sprint(got) + fmt.Sprintf("%#v", got); strings.Contains(s, "SK1") || strings.Contains(s, "ST1") {
		t.Errorf("credentials printed secrets: %s", s)
	}
	resp, _ := c.TableCredentials(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}, OperationRead)
	for loc, wantKey := range map[string]string{"s3://bucket/tables/t3": "AK0", "s3://bucket/tables/t2/x": "AK2", "s3://bucket": "AK0"} {
		sc, ok := resp.ForLocation(loc)
		if !ok || sc.Config[ConfigS3AccessKeyID] != wantKey {
			t.Errorf("ForLocation(%s) = %v %v, want %s", loc, sc.Config[ConfigS3AccessKeyID], ok, wantKey)
		}
	}
	if _, ok := resp.ForLocation("gs://other/x"); ok {
		t.Error("ForLocation matched a foreign bucket")
	}
}

func TestTemporaryTableCredentials(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, 200, `{"azure_user_delegation_sas":{"sas_token":"sv=x"},"expiration_time":5}`)
	})
	c := newClient(t, ts.URL, Options{})
	got, err := c.TemporaryTableCredentials(context.Background(), "tid", OperationRead)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Credentials{AzureSASToken: "sv=x", Expiration: time.UnixMilli(5)}, got); diff != "" {
		t.Error(diff)
	}
	if r := ts.requests()[0]; r.Path != "/temporary-table-credentials" || r.Body != `{"operation":"READ","table_id":"tid"}` {
		t.Errorf("request = %+v", r)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"catalogs":[{"name":"x"}]}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	fast := RetryPolicy{MaxAttempts: 1}

	// Verification is on by default: the test CA is unknown.
	c, err := New(srv.URL+basePath, Options{Retry: fast})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListCatalogs(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted server: err = %v", err)
	}
	// A CA bundle file makes it trusted.
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pemCert(srv), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = New(srv.URL+basePath, Options{CAFile: caFile, Retry: fast})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListCatalogs(ctx); err != nil {
		t.Fatalf("with CA file: %v", err)
	}
	// Explicit opt-out.
	c, _ = New(srv.URL+basePath, Options{InsecureSkipVerify: true, Retry: fast})
	if _, err := c.ListCatalogs(ctx); err != nil {
		t.Fatalf("insecure: %v", err)
	}
	if _, err := New(srv.URL+basePath, Options{CAFile: filepath.Join(t.TempDir(), "missing.pem")}); err == nil {
		t.Error("missing CA file accepted")
	}
}

// pemCert returns the test server's certificate in PEM form.
func pemCert(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
