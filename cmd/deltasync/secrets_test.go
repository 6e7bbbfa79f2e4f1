package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
)

// plantedSecret is put in every configured secret place; no output channel
// may show it, nor any 8 characters of it in any case.
const plantedSecret = "Pl4ntedS3cretValue0042xyz"

func assertNoSecret(t *testing.T, channel, out string) {
	t.Helper()
	low := strings.ToLower(out)
	for i := 0; i+8 <= len(plantedSecret); i++ {
		if strings.Contains(low, strings.ToLower(plantedSecret[i:i+8])) {
			t.Errorf("%s shows %q of the planted secret:\n%s", channel, plantedSecret[i:i+8], out)
			return
		}
	}
}

// TestPlantedSecretNeverShown plants a secret as the catalog token, in the
// heartbeat URL's path and query, in the Pushgateway URL's path, and in a
// catalog location's query, then greps every output channel: check-config,
// debug logs, plan text and JSON, once, /metrics, the status page, and the
// errors of a catalog that echoes the token lowercased and truncated.
func TestPlantedSecretNeverShown(t *testing.T) {
	tc := newTestCatalog(t)
	dir := tc.register("basic_partitioned", "t")
	snap := loadSnap(t, dir)
	leak := "s3://lake/t?sig=" + plantedSecret + "&endpoint=http%3A%2F%2F127.0.0.1%3A1"
	if _, err := sync.Register(context.Background(), kindOf(tc.client), snap, catalog.TableName{Catalog: "cat", Schema: "s", Table: "leaky"}, leak); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	tok := writeFile(t, tmp, "token", plantedSecret+"\n")
	cfgFile := writeFile(t, tmp, "deltasync.yaml", `catalog:
  url: `+tc.srv.URL()+`
  token_file: `+tok+`
tables:
  - include: ["cat.s.*"]
heartbeat_url: http://127.0.0.1:1/ping/`+plantedSecret+`?key=`+plantedSecret+`
pushgateway:
  url: http://127.0.0.1:1/`+plantedSecret+`
storage:
  allowed_locations: ["`+allowTemp()+`", "s3://lake/**"]
log:
  level: debug
  format: console
`)
	base := []string{"--config", cfgFile}

	code, out, errOut := runCLI(t, nil, append([]string{"check-config"}, base...)...)
	if code != 0 || !strings.Contains(out, "REDACTED") {
		t.Fatalf("check-config exit %d:\n%s\n%s", code, out, errOut)
	}
	assertNoSecret(t, "check-config", out+errOut)

	for _, args := range [][]string{{"plan"}, {"plan", "-o", "json"}, {"once"}} {
		code, out, errOut := runCLI(t, nil, append(args, base...)...)
		if code == 1 || !strings.Contains(out, "cat.s.leaky") {
			t.Errorf("%v: exit %d:\n%s\n%s", args, code, out, errOut)
		}
		if args[0] == "once" && (!strings.Contains(errOut, "heartbeat failed") || !strings.Contains(errOut, "pushing metrics failed")) {
			t.Errorf("once logged no heartbeat or push failure (the test would not see their messages):\n%s", errOut)
		}
		assertNoSecret(t, strings.Join(args, " "), out+errOut)
	}

	// run: /metrics and the status page.
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, append([]string{"run", "--listen", addr, "--schedule", "@every 1h"}, base...), nil, io.Discard, logs)
	}()
	ready := false
	for i := 0; i < 200 && !ready; i++ {
		code, _ := runGet(t, "http://"+addr+"/readyz")
		ready = code == http.StatusOK
		if !ready {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !ready {
		t.Fatal("run never became ready")
	}
	for _, p := range []string{"/metrics", "/"} {
		code, body := runGet(t, "http://"+addr+p)
		if code != http.StatusOK || !strings.Contains(body, "cat.s.leaky") {
			t.Errorf("%s: %d", p, code)
		}
		assertNoSecret(t, p, body)
	}
	cancel()
	<-done
	assertNoSecret(t, "run logs", logs.String())

	// Errors: a catalog echoing the token, lowercased and cut short.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error_code":"UNAUTHENTICATED","message":"bad token `+strings.ToLower(a)+` (`+a[7:19]+`)"}`)
	}))
	defer echo.Close()
	code, out, errOut = runCLI(t, nil, append([]string{"plan", "--catalog-url", echo.URL + "/api/2.1/unity-catalog"}, base...)...)
	if code != 1 || !strings.Contains(out+errOut, "bad token") {
		t.Errorf("plan against an echoing catalog: exit %d:\n%s\n%s", code, out, errOut)
	}
	assertNoSecret(t, "catalog errors", out+errOut)
}

func loadSnap(t *testing.T, dir string) *deltalog.Snapshot {
	t.Helper()
	tbl, err := deltalog.Open(context.Background(), "file://"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	s, err := tbl.Load(context.Background(), deltalog.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
