package main

import (
	"strings"
	"testing"
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
