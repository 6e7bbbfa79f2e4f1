//go:build !noazure

package deltalog

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

const azureAmbientEnv = "DELTASYNC_TEST_AZURE_AMBIENT"

// TestAzureTablesShareClient: tables of one container opened with ambient
// credentials share one container client (and its credential) instead of
// the gocloud opener making a client per table. gocloud reads the
// AZURE_STORAGE_* environment once per process, so the check runs in a
// child process with a shared key in its environment.
func TestAzureTablesShareClient(t *testing.T) {
	if os.Getenv(azureAmbientEnv) != "" {
		azureTablesShareClient(t)
		return
	}
	svcURL := os.Getenv("DELTASYNC_AZURITE_URL")
	account, key := os.Getenv("DELTASYNC_AZURITE_ACCOUNT"), os.Getenv("DELTASYNC_AZURITE_KEY")
	if svcURL == "" || account == "" || key == "" {
		skipOrFail(t, "Azurite not running: DELTASYNC_AZURITE_URL/_ACCOUNT/_KEY unset (run .ci/setup-azurite.sh start)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAzureTablesShareClient$", "-test.v")
	cmd.Env = append(os.Environ(), azureAmbientEnv+"=1", "AZURE_STORAGE_ACCOUNT="+account, "AZURE_STORAGE_KEY="+key)
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("child test: %v", err)
	}
}

func azureTablesShareClient(t *testing.T) {
	ctx := context.Background()
	az := newAzuriteContainer(t, "share")
	svcURL, account, containerName := az.svcURL, az.account, az.name
	const tables = 10
	seedCheckpointCopies(t, tables, func(key string, data []byte) error {
		_, err := az.client.UploadBuffer(ctx, containerName, key, bytes.Clone(data), nil)
		return err
	})
	query := "?protocol=http&localemu=true&domain=" + strings.TrimPrefix(strings.TrimSuffix(svcURL, "/"+account), "http://")
	open := func(i int) *Table {
		tbl, err := Open(ctx, fmt.Sprintf("azblob://%s/t%d%s", containerName, i, query))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tbl.Close() })
		return tbl
	}
	tbls := []*Table{open(0)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 1; i < tables; i++ {
		tbls = append(tbls, open(i))
	}
	runtime.ReadMemStats(&after)
	perOpen := (after.TotalAlloc - before.TotalAlloc) / (tables - 1)
	t.Logf("%d B allocated per Open", perOpen)
	var shared *container.Client
	for i, tbl := range tbls {
		snap, err := tbl.Load(ctx, LoadOptions{})
		if err != nil || snap.Version != 14 {
			t.Fatalf("Load t%d = %v, %v; want version 14", i, snap, err)
		}
		var c *container.Client
		if !tbl.bucket.As(&c) {
			t.Fatalf("t%d: bucket exposes no container client", i)
		}
		if shared == nil {
			shared = c
		}
		if c != shared {
			t.Errorf("t%d has a container client of its own; tables of one container must share one", i)
		}
	}
	// A client per table (the gocloud opener's) cost 16.7 KiB per Open.
	if perOpen > 8<<10 {
		t.Errorf("an Open allocated %d B, want at most 8 KiB", perOpen)
	}
}

// TestAzureLoadReusesConnections is TestS3LoadReusesConnections for
// azblob:// tables, with a vended SAS token and with ambient credentials (a
// shared key in AZURE_STORAGE_*): repeated Loads of a table whose Load has
// up to prefetchMax GETs in flight reuse their connections. Azure Storage
// speaks HTTP/1.1 only, and the Azure SDK's default transport keeps 10 idle
// connections per host, so every Load dialled again (a TLS handshake each
// against Azure) the connections above 10.
func TestAzureLoadReusesConnections(t *testing.T) {
	if os.Getenv(azureAmbientEnv) != "" {
		t.Skip("run by TestAzureTablesShareClient's child")
	}
	ctx := context.Background()
	az := newAzuriteContainer(t, "conns")
	// Checkpoint 10, commits 11-54: a Load reads 44 commits,
	// prefetchMax-1 at a time, as in TestS3LoadReusesConnections.
	const latest = 54
	seed := func(key string, data []byte) error {
		_, err := az.client.UploadBuffer(ctx, az.name, "t/"+key, bytes.Clone(data), nil)
		return err
	}
	testcorpus.ReadTree(t, filepath.Join(testcorpus.Dir(t), "checkpoint", "_delta_log"), func(name string, data []byte) error {
		return seed(logDir+name, data)
	})
	for v := int64(15); v <= latest; v++ {
		if err := seed(commitKey(v), []byte(fmt.Sprintf(commitInfoLine, v)+addLine)); err != nil {
			t.Fatal(err)
		}
	}
	// A proxy in front of Azurite counts the client's connections.
	target, err := url.Parse(az.svcURL)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = ""
	var (
		mu    stdsync.Mutex
		conns int
	)
	proxy := httptest.NewUnstartedServer(hostProxy(target))
	proxy.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	proxy.Start()
	t.Cleanup(proxy.Close)
	query := "?protocol=http&localemu=true&domain=" + strings.TrimPrefix(proxy.URL, "http://")
	sasToken, err := sas.BlobSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		StartTime:     time.Now().Add(-time.Hour).UTC(),
		ExpiryTime:    time.Now().Add(2 * time.Hour).UTC(),
		Permissions:   to.Ptr(sas.ContainerPermissions{Read: true, List: true}).String(),
		ContainerName: az.name,
	}.SignWithSharedKey(az.cred)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AZURE_STORAGE_ACCOUNT", az.account)
	t.Setenv("AZURE_STORAGE_KEY", os.Getenv("DELTASYNC_AZURITE_KEY"))
	for _, c := range []struct {
		name, url string
		creds     Credentials
	}{
		{"vended", "azblob://" + az.name + "/t" + query + "&storage_account=" + az.account, Credentials{AzureSASToken: sasToken.Encode()}},
		{"ambient", "azblob://" + az.name + "/t" + query, Credentials{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tbl, err := Open(ctx, c.url, WithCredentials(c.creds))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tbl.Close() })
			azureHTTPClient().CloseIdleConnections() // none left from the other case
			mu.Lock()
			conns = 0
			mu.Unlock()
			for i := range 5 {
				snap, err := tbl.Load(ctx, LoadOptions{})
				if err != nil || snap.Version != latest {
					t.Fatalf("Load %d = %v, %v; want version %d", i, snap, err, latest)
				}
			}
			mu.Lock()
			dialled := conns
			mu.Unlock()
			t.Logf("5 Loads opened %d connections", dialled)
			// The bound of TestS3LoadReusesConnections: the GETs in flight,
			// dialled by the first Load, and a few more.
			if limit := prefetchMax + prefetchMax/2; dialled > limit {
				t.Errorf("5 Loads opened %d connections, want at most %d: idle connections were dropped and dialled again", dialled, limit)
			}
		})
	}
}
