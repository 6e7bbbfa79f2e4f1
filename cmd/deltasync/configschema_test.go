package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// compiledConfigSchema compiles the schema gen-docs publishes (the file
// itself is kept equal to it by TestGeneratedDocsAreCurrent).
func compiledConfigSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := configSchemaJSON()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		t.Fatalf("the config schema does not compile: %v", err)
	}
	return s
}

// schemaCheck validates a YAML config file against the schema; nil: valid.
func schemaCheck(s *jsonschema.Schema, yamlDoc []byte) error {
	js, err := yaml.YAMLToJSON(yamlDoc)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

const ucURL = "https://uc.example.com/api/2.1/unity-catalog"

// TestConfigSchemaAgreesWithCheckConfig runs the schema and check-config on
// the same files, right and wrong, and wants the same verdict from both.
func TestConfigSchemaAgreesWithCheckConfig(t *testing.T) {
	s := compiledConfigSchema(t)
	base := "catalog:\n  url: " + ucURL + "\n"
	tables := "tables:\n  - include: main.*.*\n"
	for _, tc := range []struct {
		name, yaml string
		valid      bool
	}{
		{"minimal Unity Catalog", base + tables, true},
		{"Hive Metastore", "catalog:\n  url: thrift://hms.example.com:9083\n  name: hive\n  columns: real\n" + "tables:\n  - include: hive.sales.*\n", true},
		{"rules in full", base + "tables:\n  - include: [main.sales.*, '!*.tmp_*']\n    exclude: [main.sales.x]\n    mode: warn\n    on_destructive: hold\n", true},
		{"every plain key", base + tables + "ignore_properties: [a.*]\nignore_field_metadata: [b]\nwatermark_updates: 15m\ncredentials: vended\n" +
			"schedule: '@every 5m'\njitter: 1s\nconcurrency: 8\nread_concurrency: 64\nresync_interval: 2h\nbackoff:\n  initial: 10s\n  max: 1h\n" +
			"max_cycle_duration: 0s\nlisten: 127.0.0.1:9464\nshard: 1/3\nlog:\n  format: console\n  level: debug\n" +
			"storage:\n  allowed_locations: ['s3://lake/**']\n  buckets:\n    - location: s3://lake\n      options: {region: eu-west-1}\n  max_load_mib: 128\n  max_in_flight: 100\n  max_in_flight_per_bucket: 50\n" +
			"audit:\n  file: '-'\n  max_size_mib: 10\n  max_backups: 2\n  stderr: true\n", true},
		{"events as a list", base + tables + "events:\n  - mem://topic\n", true},
		{"events as a mapping", base + tables + "events:\n  subscriptions: [mem://topic]\n  debounce: 1s\n  queue_size: 10\n  max_wait: 1m\n", true},
		{"register without tables", base + "register:\n  rules:\n    - location: s3://lake/w/{schema}/{table}\n      name: main.{schema}.{table}\n  interval: 1h\n  max_per_cycle: 5\n  create_schemas: true\n", true},

		{"unknown key", base + tables + "concurency: 4\n", false},
		{"unknown nested key", "catalog:\n  url: " + ucURL + "\n  tokenfile: /x\n" + tables, false},
		{"unknown key in a rule", base + "tables:\n  - include: main.*.*\n    mod: warn\n", false},
		{"unknown key under events", base + tables + "events:\n  subscription: [mem://topic]\n", false},
		{"string for an integer", base + tables + "concurrency: four\n", false},
		{"string for a boolean", "catalog:\n  url: " + ucURL + "\n  insecure_skip_verify: 'yes'\n" + tables, false},
		{"list for a mapping", "catalog: [" + ucURL + "]\n" + tables, false},
		{"number in a string map", base + tables + "storage:\n  buckets:\n    - location: s3://lake\n      options: {use_path_style: true}\n", false},
		{"bad mode", base + "tables:\n  - include: main.*.*\n    mode: bogus\n", false},
		{"bad on_destructive", base + "tables:\n  - include: main.*.*\n    on_destructive: ask\n", false},
		{"bad log level", base + tables + "log:\n  level: verbose\n", false},
		{"bad log format", base + tables + "log:\n  format: xml\n", false},
		{"bad credentials", base + tables + "credentials: magic\n", false},
		{"bad watermark_updates", base + tables + "watermark_updates: sometimes\n", false},
		{"bad columns", "catalog:\n  url: thrift://hms:9083\n  columns: fake\n" + tables, false},
		{"bad duration", base + tables + "jitter: 5 parsecs\n", false},
		{"duration as a number", base + tables + "resync_interval: 60\n", false},
		{"no catalog.url", "catalog:\n  timeout: 5s\n" + tables, false},
		{"no catalog", tables, false},
		{"no tables and no register", base, false},
		{"empty tables", base + "tables: []\n", false},
		{"a rule without include", base + "tables:\n  - mode: warn\n", false},
		{"a register rule without name", base + "register:\n  rules:\n    - location: s3://lake/w/{schema}/{table}\n", false},
		{"a bucket without location", base + tables + "storage:\n  buckets:\n    - options: {region: x}\n", false},
		{"oauth without client_id", "catalog:\n  url: " + ucURL + "\n  oauth:\n    client_secret_file: /x\n" + tables, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schemaErr := schemaCheck(s, []byte(tc.yaml))
			path := writeFile(t, t.TempDir(), "deltasync.yaml", tc.yaml)
			code, _, errOut := runCLI(t, nil, "check-config", "--config", path)
			if (schemaErr == nil) != tc.valid {
				t.Errorf("schema: valid=%v, want %v: %v\n%s", schemaErr == nil, tc.valid, schemaErr, tc.yaml)
			}
			if (code == 0) != tc.valid {
				t.Errorf("check-config: exit %d, want valid=%v:\n%s\n%s", code, tc.valid, errOut, tc.yaml)
			}
		})
	}
}

// exampleConfigs are the config files the repository ships, by name.
func exampleConfigs(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range []string{"deploy/config.example.yaml", "deploy/kubernetes/base/config.yaml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, p))
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	// The Helm chart's config: its default, and each documented values file
	// merged over it as Helm merges (maps merged, lists replaced, null drops).
	chart := filepath.Join(repoRoot, "deploy/helm/deltasync")
	defaults := helmConfig(t, filepath.Join(chart, "values.yaml"))
	out[valuesPath+" config"] = mustYAML(t, defaults)
	files, _ := filepath.Glob(filepath.Join(chart, "ci", "*-values.yaml"))
	if len(files) == 0 {
		t.Fatal("no deploy/helm/deltasync/ci/*-values.yaml")
	}
	for _, f := range files {
		over := helmConfig(t, f)
		out[filepath.Base(f)+" config"] = mustYAML(t, helmMerge(helmConfig(t, filepath.Join(chart, "values.yaml")), over))
	}
	return out
}

func helmConfig(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Config map[string]any `json:"config"`
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v.Config
}

// helmMerge merges over into base as Helm merges values.
func helmMerge(base, over map[string]any) map[string]any {
	for k, v := range over {
		switch ov := v.(type) {
		case nil:
			delete(base, k)
		case map[string]any:
			if bv, ok := base[k].(map[string]any); ok {
				base[k] = helmMerge(bv, ov)
				continue
			}
			base[k] = ov
		default:
			base[k] = v
		}
	}
	return base
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExampleConfigsMatchSchema: every config the repository ships is valid
// under the published schema, and names it for editors where it is a file
// of its own.
func TestExampleConfigsMatchSchema(t *testing.T) {
	s := compiledConfigSchema(t)
	for name, b := range exampleConfigs(t) {
		if err := schemaCheck(s, b); err != nil {
			t.Errorf("%s does not match docs/reference/config.schema.json: %v", name, err)
		}
		if strings.HasSuffix(name, ".yaml") && !bytes.Contains(b, []byte("# yaml-language-server: $schema=")) {
			t.Errorf("%s has no yaml-language-server modeline naming the schema", name)
		}
	}
}
