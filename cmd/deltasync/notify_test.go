package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
)

// TestCheckConfigNotify: check-config names every problem of the notify
// section by its key, and prints the section with its secrets redacted.
func TestCheckConfigNotify(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.yaml", `catalog: {url: `+ucURL+`}
tables: [{include: "main.*.*"}]
notify:
  queue_size: -1
  openlineage: {url: "ftp://x", api_key_file: /k, api_key_env: K}
  pubsub: {url: "no-scheme"}
  webhook:
    template: "{{.Nope"
    headers: [{name: X-A}, {value: v}]
`)
	code, _, errOut := runCLI(t, nil, "check-config", "--config", bad)
	if code == 0 {
		t.Fatal("check-config accepted a bad notify section")
	}
	for _, want := range []string{
		"notify: queue_size, max_attempts, timeout and drain must not be negative",
		"notify.openlineage: set at most one of api_key_file and api_key_env",
		"notify.openlineage.url:",
		"notify.pubsub.url",
		"notify.webhook: set one of url and url_env",
		"notify.webhook.template:",
		"notify.webhook.headers[0]: want a name and one of value, env and file",
		"notify.webhook.headers[1]: want a name and one of value, env and file",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check-config output lacks %q:\n%s", want, errOut)
		}
	}
	good := writeFile(t, dir, "good.yaml", `catalog: {url: `+ucURL+`}
tables: [{include: "main.*.*"}]
notify:
  openlineage: {url: "https://lineage.example.com", api_key_env: OL_KEY}
  pubsub: {url: "mem://changes"}
  webhook:
    url: "https://hooks.example.com/services/T0/B0/s3cr3t-t0ken"
    template: '{"text": {{json .Table}}}'
    headers: [{name: X-Auth, value: h3ader-s3cret}, {name: X-Env, env: HOOK_SECRET}]
`)
	code, out, errOut := runCLI(t, nil, "check-config", "--config", good)
	if code != 0 {
		t.Fatalf("check-config refused a good notify section (exit %d):\n%s", code, errOut)
	}
	for _, secret := range []string{"s3cr3t-t0ken", "h3ader-s3cret"} {
		if strings.Contains(out+errOut, secret) {
			t.Errorf("check-config prints the secret %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "hooks.example.com") {
		t.Errorf("check-config output lacks the redacted webhook:\n%s", out)
	}
}

// TestOnceSendsChangeEvents: once with a notify section sends the synced
// table's event to the webhook (rendered by its template, with a header
// read from the environment) and to OpenLineage (with the API key from the
// environment), and drains them before it exits; plan sends nothing.
func TestOnceSendsChangeEvents(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "synced")
	tc.mutate("synced", func(tb *uctest.Table) { tb.Properties["stray"] = "x" })
	var mu stdsync.Mutex
	got := map[string][]string{}
	sink := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got[r.URL.Path] = append(got[r.URL.Path], r.Header.Get("Authorization")+" "+r.Header.Get("X-Hook")+" "+string(b))
	}))
	defer sink.Close()
	cfg := writeFile(t, t.TempDir(), "notify.yaml", `notify:
  instance: test-1
  openlineage: {url: "`+sink.URL+`/ol", api_key_env: OL_KEY}
  webhook:
    url: "`+sink.URL+`/hook/s3cr3t"
    template: '{"text": {{json (printf "%s %s" .Kind .Table)}}}'
    headers: [{name: X-Hook, env: HOOK_SECRET}]
`)
	env := map[string]string{"OL_KEY": "k3y", "HOOK_SECRET": "h00k"}
	base := []string{"--config", cfg, "--catalog-url", tc.srv.URL(), "--log-level", "error", "--allow-location", allowTemp(), "--include", "cat.s.synced"}
	if code, out, errOut := runCLI(t, env, append([]string{"plan"}, base...)...); code != 2 {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	if len(got) != 0 {
		t.Fatalf("plan sent change events: %v", got)
	}
	mu.Unlock()
	if code, out, errOut := runCLI(t, env, append([]string{"once"}, base...)...); code != 0 {
		t.Fatalf("once: exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	hook, ol := got["/hook/s3cr3t"], got["/ol/api/v1/lineage"]
	if len(hook) != 1 || hook[0] != ` h00k {"text": "synced cat.s.synced"}` {
		t.Errorf("webhook got %q", hook)
	}
	if len(ol) != 1 || !strings.HasPrefix(ol[0], "Bearer k3y  {") || !strings.Contains(ol[0], `"deltasync_changes"`) {
		t.Errorf("OpenLineage got %q", ol)
	}
}
