package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"sigs.k8s.io/yaml"
)

// lightTags leave the cloud storage drivers out of the binaries the tests
// build with `go run`: they are not needed to check config or list metrics,
// and are the bulk of a cold build.
const lightTags = "nos3,nogcs,noazure"

const (
	baseConfigPath    = "kubernetes/base/config.yaml"
	exampleConfigPath = "config.example.yaml"
)

// keyPaths lists every map key path of a decoded YAML document ("catalog.url",
// "tables[].mode"); list items share one path.
func keyPaths(prefix string, v any, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out[p] = true
			keyPaths(p, child, out)
		}
	case []any:
		for _, child := range v {
			keyPaths(prefix+"[]", child, out)
		}
	}
}

func loadKeyPaths(t *testing.T, path string) map[string]bool {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal([]byte(readFile(t, path)), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]bool{}
	keyPaths("", doc, out)
	return out
}

// TestConfigUsesExampleKeys: the deployment config only uses options that
// deploy/config.example.yaml (the documented reference, owned by the sync
// engineer) sets, so a renamed option shows up here as well as in
// check-config.
func TestConfigUsesExampleKeys(t *testing.T) {
	// Fail, never skip: a renamed or deleted reference would otherwise let
	// this check pass silently.
	if _, err := os.Stat(exampleConfigPath); err != nil {
		t.Fatalf("deploy/%s (the documented config reference) is missing: %v", exampleConfigPath, err)
	}
	example := loadKeyPaths(t, exampleConfigPath)
	var unknown []string
	for k := range loadKeyPaths(t, baseConfigPath) {
		if !example[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("%s uses options that %s does not document: %v", baseConfigPath, exampleConfigPath, unknown)
	}
}

// TestConfigChecks runs `deltasync check-config` on the config the manifests
// ship, with a stand-in token file (check-config stats it).
func TestConfigChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the deltasync binary; skipped with -short")
	}
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("not-a-real-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "-tags", lightTags, "../cmd/deltasync", "check-config",
		"--config", baseConfigPath, "--token-file", token)
	// Only what check-config needs: no DELTASYNC_* from the caller's environment.
	for _, kv := range os.Environ() {
		if len(kv) < 10 || kv[:10] != "DELTASYNC_" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("deltasync check-config --config %s: %v\n%s", baseConfigPath, err, out)
	}
}
