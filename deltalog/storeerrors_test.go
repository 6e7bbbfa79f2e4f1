package deltalog

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/deltasync/deltasync/internal/testenv"
)

// loadErr opens and loads a table and returns the error (nil fails the test).
func loadErr(t *testing.T, rawURL string, creds Credentials) error {
	t.Helper()
	tbl, err := Open(context.Background(), rawURL, WithCredentials(creds))
	if err != nil {
		return err
	}
	defer tbl.Close()
	if _, err := tbl.Load(context.Background(), LoadOptions{}); err != nil {
		return err
	}
	t.Fatalf("load %s succeeded, want an error", rawURL)
	return nil
}

// noAmbientAWS leaves the process with no AWS credentials or region of its
// own: no keys, no shared files, no instance metadata.
func noAmbientAWS(t *testing.T) {
	t.Helper()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_EC2_METADATA_SERVICE_ENDPOINT"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// fakeS3 serves gofakes3 in-process with one bucket, "lake".
func fakeS3(t *testing.T) string {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return srv.URL
}

func s3Query(endpoint string, region bool) string {
	q := "?endpoint=" + url.QueryEscape(endpoint) + "&use_path_style=true&disable_https=true"
	if region {
		q += "&region=us-east-1"
	}
	return q
}

var staticS3 = Credentials{S3AccessKeyID: "AKIDEXAMPLE", S3SecretAccessKey: "secret"}

// expectStoreError checks the kind, that the message says what to do, and
// that the old misleading wording is gone.
func expectStoreError(t *testing.T, err error, kind error, wants ...string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error is not %q:\n%v", kind, err)
	}
	msg := err.Error()
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if strings.Contains(msg, "not a Delta table") {
		t.Errorf("a storage failure is reported as not a Delta table:\n%s", msg)
	}
}

func TestS3NoSuchBucketSaysSo(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	endpoint := fakeS3(t)
	err := loadErr(t, "s3://missing/path/to/table"+s3Query(endpoint, true), staticS3)
	expectStoreError(t, err, ErrBucketNotFound,
		"bucket does not exist: S3 has no such bucket: check the bucket name in the table URL (s3://BUCKET/path/to/table)", "NoSuchBucket")
}

func TestS3NoRegionSaysWhereToSetIt(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	noAmbientAWS(t)
	// Without an endpoint the SDK resolves one from the region, so the
	// missing region fails before any request.
	err := loadErr(t, "s3://bucket/path/to/table", staticS3)
	expectStoreError(t, err, ErrRegion,
		"S3 region missing or wrong: add ?region=<the bucket's region> to the table URL, or set AWS_REGION")
}

func TestS3NoCredentialsSaysHowToGiveSome(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	noAmbientAWS(t)
	endpoint := fakeS3(t)
	err := loadErr(t, "s3://lake/path/to/table"+s3Query(endpoint, true), Credentials{})
	expectStoreError(t, err, ErrNoCredentials,
		"no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE", "credentials: vended")
}

// gofakes3 checks no signatures, so S3's refusals come from a loopback
// server answering as S3 does (status, XML error body); the SDK parses
// them for real.
func s3Refusing(t *testing.T, status int, code string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+
			`</Code><Message>refused</Message><RequestId>1</RequestId></Error>`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestS3RefusalsSayWhatToGrant(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	for _, tc := range []struct {
		code string
		want string
	}{
		{"AccessDenied", "access denied: S3 refused the request: the identity in use needs s3:ListBucket on the bucket and s3:GetObject"},
		{"InvalidAccessKeyId", "access denied: S3 does not accept these credentials (unknown key, wrong secret or expired token)"},
		{"ExpiredToken", "access denied: S3 does not accept these credentials"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			endpoint := s3Refusing(t, http.StatusForbidden, tc.code)
			err := loadErr(t, "s3://lake/path/to/table"+s3Query(endpoint, true), staticS3)
			expectStoreError(t, err, ErrAccessDenied, tc.want, tc.code)
		})
	}
}

// The SDK's own warnings (IMDSv1 fallback) no longer reach stderr in
// their own format: an instance metadata endpoint that refuses tokens
// (403) made the SDK print "SDK ... WARN falling back to IMDSv1".
func TestS3SDKWritesNothingToStderr(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	noAmbientAWS(t)
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	t.Cleanup(imds.Close)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	endpoint := fakeS3(t)

	stderr := os.Stderr
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	os.Stderr = f
	lerr := func() error {
		defer func() { os.Stderr = stderr }()
		return loadErr(t, "s3://lake/path/to/table"+s3Query(endpoint, true), Credentials{})
	}()
	expectStoreError(t, lerr, ErrNoCredentials, "no credentials: set AWS_ACCESS_KEY_ID")
	written, _ := os.ReadFile(f.Name())
	if len(written) > 0 {
		t.Errorf("the AWS SDK wrote to stderr:\n%s", written)
	}
}

func TestGCSNoSuchBucketSaysSo(t *testing.T) {
	if !gcsEnabled {
		t.Skip("built with tag nogcs")
	}
	port := testenv.FreePort(t)
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme: "http", Host: "127.0.0.1", Port: port, PublicHost: "127.0.0.1:" + strconv.Itoa(int(port)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:"+strconv.Itoa(int(port)))
	err = loadErr(t, "gs://missing/path/to/table", Credentials{GCSOAuthToken: "ya29.test-token"})
	expectStoreError(t, err, ErrBucketNotFound, "bucket does not exist: GCS has no such bucket")
}

func TestGCSNoCredentialsSaysHowToGiveSome(t *testing.T) {
	if !gcsEnabled {
		t.Skip("built with tag nogcs")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLOUDSDK_CONFIG", home)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	t.Setenv("STORAGE_EMULATOR_HOST_GRPC", "")
	// gocloud's opener printed "Warning: unable to load GCP Default
	// Credentials" to stdout, with no newline, before the real error.
	stdout := os.Stdout
	f, ferr := os.CreateTemp(t.TempDir(), "stdout")
	if ferr != nil {
		t.Fatal(ferr)
	}
	os.Stdout = f
	_, err := Open(context.Background(), "gs://bucket/path/to/table")
	os.Stdout = stdout
	expectStoreError(t, err, ErrNoCredentials, "no credentials: set GOOGLE_APPLICATION_CREDENTIALS")
	if written, _ := os.ReadFile(f.Name()); len(written) > 0 {
		t.Errorf("opening a gs:// table wrote to stdout:\n%s", written)
	}
}

func TestAzureNoAccountSaysHowToGiveOne(t *testing.T) {
	if !azureEnabled {
		t.Skip("built with tag noazure")
	}
	for _, k := range []string{"AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	_, err := Open(context.Background(), "azblob://container/path/to/table")
	expectStoreError(t, err, ErrNoCredentials, "add ?storage_account=NAME to the table URL or set AZURE_STORAGE_ACCOUNT")
}
