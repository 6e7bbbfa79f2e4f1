package deltalog

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/deltasync/deltasync/internal/redact"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/deltasync/deltasync/internal/testenv"
)

// contractStores lists every backend of the storage contract.
var contractStores = []struct {
	name  string
	setup func(t *testing.T) *contractStore
}{
	{"file", fileStore},
	{"mem", memStore},
	{"s3", s3Store},
	{"gcs", gcsStore},
	{"azure", azureStore},
}

// skipOrFail skips the test with why, or fails it under
// DELTASYNC_REQUIRE_EXTERNAL=1 (testenv.Missing).
func skipOrFail(t testing.TB, why string) {
	t.Helper()
	testenv.Missing(t, testenv.External, why)
}

func openTable(t testing.TB, rawURL string, creds Credentials) *blob.Bucket {
	t.Helper()
	b, _, err := openBucket(context.Background(), rawURL, creds)
	if err != nil {
		t.Fatalf("open %s: %v", redact.Location(rawURL), err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func fileStore(t *testing.T) *contractStore {
	dir := t.TempDir()
	return &contractStore{
		put: func(t *testing.T, key string, data []byte) {
			p := filepath.Join(dir, filepath.FromSlash(key))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		table: func(t *testing.T, root string) *blob.Bucket {
			return openTable(t, "file://"+filepath.ToSlash(filepath.Join(dir, root)), Credentials{})
		},
	}
}

func memStore(_ *testing.T) *contractStore {
	data := map[string][]byte{}
	return &contractStore{
		put: func(_ *testing.T, key string, b []byte) { data[key] = b },
		// PrefixedBucket takes over (closes) the bucket it is given, so each
		// table gets a memblob of its own holding every key put so far
		// (siblings included, so a leak across the prefix would show).
		table: func(t *testing.T, root string) *blob.Bucket {
			mem := memblob.OpenBucket(nil)
			for k, b := range data {
				if err := mem.WriteAll(context.Background(), k, b, nil); err != nil {
					t.Fatal(err)
				}
			}
			pb := blob.PrefixedBucket(mem, root)
			t.Cleanup(func() { pb.Close() })
			return pb
		},
	}
}

// s3Store runs gofakes3 in-process and opens tables with s3:// URLs and
// static (vended-style) credentials.
func s3Store(t *testing.T) *contractStore {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	rec := &listRecorder{}
	isList := func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2"
	}
	// gofakes3 does not check signatures: record that requests were signed
	// with the vended key and carried its session token.
	var signed, unsigned atomic.Int64
	fake := gofakes3.New(backend).Server()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Authorization"), "Credential=AKIDEXAMPLE/") && r.Header.Get("X-Amz-Security-Token") == "token" {
			signed.Add(1)
		} else {
			unsigned.Add(1)
		}
		fake.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(rec.wrap(isList, handler))
	t.Cleanup(srv.Close)
	creds := Credentials{S3AccessKeyID: "AKIDEXAMPLE", S3SecretAccessKey: "secret", S3SessionToken: "token"}
	query := "?endpoint=" + url.QueryEscape(srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
	seed := openTable(t, "s3://lake"+query, creds)
	return &contractStore{
		put: func(t *testing.T, key string, data []byte) {
			if err := seed.WriteAll(context.Background(), key, data, nil); err != nil {
				t.Fatal(err)
			}
		},
		table: func(t *testing.T, root string) *blob.Bucket {
			return openTable(t, "s3://lake/"+root+query, creds)
		},
		rec:       rec,
		hintParam: "start-after",
		check: func(t *testing.T) {
			if signed.Load() == 0 || unsigned.Load() != 0 {
				t.Errorf("S3 requests signed with the vended credentials: %d, without: %d", signed.Load(), unsigned.Load())
			}
		},
	}
}

// gcsStore runs fake-gcs-server in-process behind a recording proxy and
// opens tables with gs:// URLs and an OAuth token; the driver reaches the
// fake through STORAGE_EMULATOR_HOST.
func gcsStore(t *testing.T) *contractStore {
	if !gcsEnabled {
		t.Skip("built with tag nogcs")
	}
	port := testenv.FreePort(t)
	host := "127.0.0.1:" + strconv.Itoa(int(port))
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme: "http", Host: "127.0.0.1", Port: port, PublicHost: host, NoListener: false,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "lake"})
	rec := &listRecorder{}
	isList := func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/b/lake/o")
	}
	target, _ := url.Parse("http://" + host)
	proxy := httptest.NewServer(rec.wrap(isList, hostProxy(target)))
	t.Cleanup(proxy.Close)
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(proxy.URL, "http://"))
	creds := Credentials{GCSOAuthToken: "ya29.test-token"}
	return &contractStore{
		put: func(_ *testing.T, key string, data []byte) {
			srv.CreateObject(fakestorage.Object{
				ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "lake", Name: key},
				Content:     data,
			})
		},
		table: func(t *testing.T, root string) *blob.Bucket {
			return openTable(t, "gs://lake/"+root, creds)
		},
		rec:       rec,
		hintParam: "startOffset",
	}
}

// azuriteContainer is a fresh container on the Azurite started by
// .ci/setup-azurite.sh (DELTASYNC_AZURITE_URL, _ACCOUNT, _KEY), with a
// shared-key client to seed it (gocloud's azureblob panics on failed
// uploads). It is deleted when the test ends.
type azuriteContainer struct {
	svcURL, account, name string
	cred                  *azblob.SharedKeyCredential
	client                *azblob.Client
}

func newAzuriteContainer(t *testing.T, prefix string) azuriteContainer {
	t.Helper()
	az := azuriteContainer{svcURL: os.Getenv("DELTASYNC_AZURITE_URL"), account: os.Getenv("DELTASYNC_AZURITE_ACCOUNT")}
	key := os.Getenv("DELTASYNC_AZURITE_KEY")
	if az.svcURL == "" || az.account == "" || key == "" {
		skipOrFail(t, "Azurite not running: DELTASYNC_AZURITE_URL/_ACCOUNT/_KEY unset (run .ci/setup-azurite.sh start)")
	}
	var err error
	if az.cred, err = azblob.NewSharedKeyCredential(az.account, key); err != nil {
		t.Fatal(err)
	}
	if az.client, err = azblob.NewClientWithSharedKeyCredential(az.svcURL, az.cred, nil); err != nil {
		t.Fatal(err)
	}
	az.name = prefix + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := az.client.CreateContainer(context.Background(), az.name, nil); err != nil {
		t.Fatalf("create container on Azurite %s: %v", az.svcURL, err)
	}
	t.Cleanup(func() { _, _ = az.client.DeleteContainer(context.Background(), az.name, nil) })
	return az
}

// seedCheckpointCopies puts n copies of the corpus table "checkpoint"'s log
// (checkpoint at 10, commits 11-14) under t0/, t1/, … with put.
func seedCheckpointCopies(t *testing.T, n int, put func(key string, data []byte) error) {
	t.Helper()
	dir := filepath.Join(testcorpus.Dir(t), "checkpoint", "_delta_log")
	for i := range n {
		testcorpus.ReadTree(t, dir, func(name string, data []byte) error {
			return put(fmt.Sprintf("t%d/%s%s", i, logDir, name), data)
		})
	}
}

// azureStore uses the Azurite started by .ci/setup-azurite.sh
// (DELTASYNC_AZURITE_URL, _ACCOUNT, _KEY). It seeds with the azblob SDK and
// a shared key (gocloud's azureblob panics on failed uploads) and opens
// tables with azblob:// URLs and a container SAS token, through a
// recording proxy.
func azureStore(t *testing.T) *contractStore {
	if !azureEnabled {
		t.Skip("built with tag noazure")
	}
	az := newAzuriteContainer(t, "lake")
	svcURL, account, cred, client, containerName := az.svcURL, az.account, az.cred, az.client, az.name
	ctx := context.Background()
	qp, err := sas.BlobSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		StartTime:     time.Now().Add(-time.Hour).UTC(),
		ExpiryTime:    time.Now().Add(2 * time.Hour).UTC(),
		Permissions:   to.Ptr(sas.ContainerPermissions{Read: true, List: true}).String(),
		ContainerName: containerName,
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	rec := &listRecorder{}
	isList := func(r *http.Request) bool { return r.URL.Query().Get("comp") == "list" }
	target, _ := url.Parse(svcURL)
	target.Path = ""
	proxy := httptest.NewServer(rec.wrap(isList, hostProxy(target)))
	t.Cleanup(proxy.Close)
	creds := Credentials{AzureSASToken: qp.Encode()}
	query := "?protocol=http&localemu=true&storage_account=" + account + "&domain=" + strings.TrimPrefix(proxy.URL, "http://")
	return &contractStore{
		put: func(t *testing.T, key string, data []byte) {
			if _, err := client.UploadBuffer(ctx, containerName, key, bytes.Clone(data), nil); err != nil {
				t.Fatalf("seed %s: %v", key, err)
			}
		},
		table: func(t *testing.T, root string) *blob.Bucket {
			return openTable(t, "azblob://"+containerName+"/"+root+query, creds)
		},
		rec:       rec,
		hintParam: "startFrom",
		check: func(t *testing.T) {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for _, q := range rec.queries {
				if v, _ := url.ParseQuery(q); v.Get("sig") == "" {
					t.Errorf("Azure LIST without the vended SAS signature: %s", q)
				}
			}
		},
	}
}

// hostProxy forwards to target with the Host header rewritten to target's,
// so fakes that route on Host (fake-gcs-server's PublicHost) still match.
func hostProxy(target *url.URL) http.Handler {
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = target.Host
	}}
}
