package sync_test

import (
	"bytes"
	"context"
	"net/http"
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
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/deltasync/deltasync/internal/testenv"
)

// mirrorStore is a remote store plus a local mirror of every object: the
// writer reads its states from the mirror (same bytes, no proxies), and
// the audit lists the remote store itself.
type mirrorStore struct {
	mirror dirStore
	putFn  func(t *testing.T, key string, data []byte)
	delFn  func(t *testing.T, key string)
	listFn func(t *testing.T) map[string]string
	urlOf  func(table string) string
}

func (m *mirrorStore) put(t *testing.T, key string, data []byte) {
	m.putFn(t, key, data)
	m.mirror.put(t, key, data)
}
func (m *mirrorStore) remove(t *testing.T, key string) {
	m.delFn(t, key)
	m.mirror.remove(t, key)
}
func (m *mirrorStore) objects(t *testing.T) map[string]string { return m.listFn(t) }
func (m *mirrorStore) url(table string) string                { return m.urlOf(table) }
func (m *mirrorStore) direct(table string) string             { return m.mirror.url(table) }

// gcsRigStore runs fake-gcs-server in-process behind the fault proxy and
// Toxiproxy; the gs driver reaches it through STORAGE_EMULATOR_HOST.
func gcsRigStore(rg *faultRig) store {
	t := rg.t
	l := testenv.FreePort(t)
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme: "http", Host: "127.0.0.1", Port: l, PublicHost: "127.0.0.1:" + strconv.Itoa(int(l)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "lake"})
	rg.storeFaults = newFaultProxy(t, "http://127.0.0.1:"+strconv.Itoa(int(l)))
	rg.storeToxic = toxicProxy(t, "gcs", hostOf(t, rg.storeFaults.srv.URL))
	t.Setenv("STORAGE_EMULATOR_HOST", rg.storeToxic.Listen)
	return &mirrorStore{
		mirror: dirStore{root: t.TempDir()},
		putFn: func(_ *testing.T, key string, data []byte) {
			srv.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "lake", Name: key}, Content: data})
		},
		delFn: func(t *testing.T, key string) {
			if err := srv.Backend().DeleteObject("lake", key); err != nil {
				t.Fatal(err)
			}
		},
		listFn: func(t *testing.T) map[string]string {
			list, err := srv.ListObjectsWithOptionsPaginated("lake", fakestorage.ListOptions{}) // no MaxResults: one page
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, o := range list.Objects {
				full, err := srv.GetObject("lake", o.Name)
				if err != nil {
					t.Fatal(err)
				}
				out[o.Name] = sha(full.Content)
			}
			return out
		},
		urlOf: func(table string) string { return "gs://lake/" + table },
	}
}

// azureRigStore uses the Azurite of .ci/setup-azurite.sh behind the fault
// proxy and Toxiproxy, read with a container SAS token.
func azureRigStore(rg *faultRig) store {
	t := rg.t
	svcURL := os.Getenv("DELTASYNC_AZURITE_URL")
	account, key := os.Getenv("DELTASYNC_AZURITE_ACCOUNT"), os.Getenv("DELTASYNC_AZURITE_KEY")
	if svcURL == "" || account == "" || key == "" {
		testenv.Missing(t, testenv.External, "Azurite not running: DELTASYNC_AZURITE_URL/_ACCOUNT/_KEY unset (run .ci/setup-azurite.sh start)")
	}
	ctx := context.Background()
	cred, err := azblob.NewSharedKeyCredential(account, key)
	if err != nil {
		t.Fatal(err)
	}
	client, err := azblob.NewClientWithSharedKeyCredential(svcURL, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	container := "faults" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := client.CreateContainer(ctx, container, nil); err != nil {
		t.Fatalf("create container on Azurite %s: %v", svcURL, err)
	}
	t.Cleanup(func() { _, _ = client.DeleteContainer(context.Background(), container, nil) })
	qp, err := sas.BlobSignatureValues{
		Protocol: sas.ProtocolHTTPSandHTTP, StartTime: time.Now().Add(-time.Hour).UTC(), ExpiryTime: time.Now().Add(2 * time.Hour).UTC(),
		Permissions: to.Ptr(sas.ContainerPermissions{Read: true, List: true}).String(), ContainerName: container,
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	rg.storeFaults = newFaultProxy(t, svcURL)
	rg.storeToxic = toxicProxy(t, "azurite", hostOf(t, rg.storeFaults.srv.URL))
	rg.logOpts = append(rg.logOpts, deltalog.WithCredentials(deltalog.Credentials{AzureSASToken: qp.Encode()}))
	// The catalog records abfss://container@account.dfs.core.windows.net/t,
	// as Databricks and UC write Azure locations; the storage policy maps it
	// to azblob:// with storage_account from the host and the Azurite
	// endpoint (behind the proxies) from the bucket's options.
	query := "?protocol=http&localemu=true&domain=" + rg.storeToxic.Listen
	bucket := container + "@" + account + ".dfs.core.windows.net"
	return &mirrorStore{
		mirror: dirStore{root: t.TempDir()},
		putFn: func(t *testing.T, key string, data []byte) {
			if _, err := client.UploadBuffer(ctx, container, key, bytes.Clone(data), nil); err != nil {
				t.Fatalf("azurite: put %s: %v", key, err)
			}
		},
		delFn: func(t *testing.T, key string) {
			if _, err := client.DeleteBlob(ctx, container, key, nil); err != nil {
				t.Fatalf("azurite: delete %s: %v", key, err)
			}
		},
		listFn: func(t *testing.T) map[string]string {
			out := map[string]string{}
			pager := client.NewListBlobsFlatPager(container, nil)
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range page.Segment.BlobItems {
					resp, err := client.DownloadStream(ctx, container, *b.Name, nil)
					if err != nil {
						t.Fatal(err)
					}
					var buf bytes.Buffer
					_, err = buf.ReadFrom(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Fatal(err)
					}
					out[*b.Name] = sha(buf.Bytes())
				}
			}
			return out
		},
		urlOf: func(table string) string { return "abfss://" + bucket + "/" + table + query },
	}
}

// TestFaultsStorageCheckpointVacuum: _last_checkpoint names a checkpoint
// that a log clean-up deletes between deltasync's GET of the pointer and
// its LIST; the writer then writes it again, and it is deleted again.
func TestFaultsStorageCheckpointVacuum(t *testing.T) {
	testenv.Suite(t)
	rg := newFaultRig(t, s3RigStore)
	rg.addStatic("cp", "checkpoint")
	const cpKey = "cp/_delta_log/00000000000000000010.checkpoint.parquet"
	cpData, err := os.ReadFile(filepath.Join(testcorpus.Dir(t), "checkpoint", "_delta_log", "00000000000000000010.checkpoint.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	var vacuumed atomic.Int64
	before := func(r *http.Request, _ []byte) {
		if armed.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/cp/_delta_log/_last_checkpoint") {
			if rg.w.vacuum(cpKey) {
				vacuumed.Add(1)
			}
		}
	}
	rg.storeFaults.set(func() { rg.storeFaults.before = before })
	// Each cycle the checkpoint is written again, and vacuumed again once
	// deltasync has read the pointer to it.
	rg.eachCycle = func() {
		rg.w.restore(cpKey, cpData)
		rg.rec = rg.newReconciler() // as after a restart: a full Load, which GETs _last_checkpoint
	}
	rg.scenario("S3: _last_checkpoint names a checkpoint being vacuumed", 4,
		func() { armed.Store(true) }, func() int { armed.Store(false); return int(vacuumed.Load()) })
}

// TestFaultsStorageAzureGCS puts Azurite and fake-gcs-server behind the
// proxies: latency with jitter, then a reset burst.
func TestFaultsStorageAzureGCS(t *testing.T) {
	testenv.Suite(t)
	for _, c := range []struct {
		name string
		mk   rigStore
		base string
	}{
		{"GCS (fake-gcs-server)", gcsRigStore, ucBase(t)},
		// UC OSS 0.6 refuses azblob:// locations ("Unsupported URI
		// scheme: azblob") but accepts abfss://, which the storage policy
		// maps to azblob:// for deltalog: the real catalog, like the others.
		{"Azure (Azurite)", azureRigStore, ucBase(t)},
	} {
		t.Run(strings.Fields(c.name)[0]+"/latency", func(t *testing.T) {
			rg := newFaultRigAt(t, c.base, c.mk)
			inject, clearFault := toxic(t, rg.storeToxic, "latency", "downstream", 1, toxiclient.Attributes{"latency": 80, "jitter": 60}, countStorageAttempts)
			rg.scenario(c.name+": latency 80ms ± 60ms", 3, inject, clearFault)
		})
		t.Run(strings.Fields(c.name)[0]+"/503", func(t *testing.T) {
			rg := newFaultRigAt(t, c.base, c.mk)
			if strings.HasPrefix(c.name, "Azure") {
				// The catalog keeps the abfss:// location it was given.
				ti, err := rg.env.client.GetTable(t.Context(), rg.env.name("t0").String())
				if err != nil || !strings.HasPrefix(ti.StorageLocation, "abfss://") {
					t.Fatalf("catalog record of t0: %v, %v; want an abfss:// location", ti, err)
				}
			}
			rg.scenario(c.name+": 503 burst", 3, func() { rg.storeFaults.inject(httpFault{Status: 503}, 8, nil) }, rg.storeFaults.stop)
		})
	}
}
