//go:build !noazure

package deltalog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
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
