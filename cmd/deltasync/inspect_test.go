package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// runInspect runs "deltasync inspect args..." in-process.
func runInspect(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"inspect"}, args...), nil, &out, &errb)
	return code, out.String(), errb.String()
}

func TestInspect(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings
		stderr   []string
		jsonWant map[string]any // top-level JSON fields to check
	}{
		{name: "text", args: []string{filepath.Join(testcorpus.Dir(t), "dv-with-columnmapping")}, stdout: []string{
			"version:            15\n",
			"protocol:           reader 3, writer 7\n",
			"reader features:    deletionVectors, columnMapping\n",
			"partition columns:  part\n",
			"properties:\n  delta.columnMapping.maxColumnId = 3\n  delta.columnMapping.mode = name\n  delta.enableDeletionVectors = true\n",
			"schema:\n  part: integer\n  col1: integer\n  col2: string\n",
		}},
		{name: "text with file URL and nested schema", args: []string{"file://" + inspectAbs(t, filepath.Join(testcorpus.Dir(t), "data-reader-array-complex-objects"))}, stdout: []string{
			"  list_of_records: array\n    element: struct\n      val: integer\n",
		}},
		{name: "json", args: []string{"-o", "json", filepath.Join(testcorpus.Dir(t), "checkpoint")},
			jsonWant: map[string]any{"version": 14.0, "catalogManaged": false, "commitTimestamp": 1697495786458.0}},
		{name: "json catalog-managed", args: []string{"-o", "json", filepath.Join(testcorpus.Dir(t), "catalog_managed_0")},
			jsonWant: map[string]any{"version": 0.0, "catalogManaged": true}},
		{name: "refused gap", args: []string{filepath.Join(testcorpus.Dir(t), "err-table_c-gap-after-checkpoint")}, code: 1,
			stderr: []string{"err-table_c-gap-after-checkpoint", "00000000000000000012.json", "commit 12 is missing"}},
		{name: "refused feature", args: []string{"-o", "json", filepath.Join(testcorpus.Dir(t), "err-table_d-catalogOwned")}, code: 1,
			stderr: []string{`unsupported reader feature "catalogOwned"`}},
		{name: "not a table", args: []string{t.TempDir()}, code: 1, stderr: []string{"not a Delta table"}},
		{name: "bad format", args: []string{"-o", "yaml", "x"}, code: 1, stderr: []string{`-o "yaml": want text or json`}},
		{name: "no argument", args: nil, code: 1, stderr: []string{"accepts 1 arg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runInspect(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if tt.jsonWant != nil {
				var got map[string]any
				if err := json.Unmarshal([]byte(stdout), &got); err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
				}
				for k, v := range tt.jsonWant {
					if got[k] != v {
						t.Errorf("%s = %v, want %v", k, got[k], v)
					}
				}
				for _, k := range []string{"protocol", "metaData"} {
					if _, ok := got[k].(map[string]any); !ok {
						t.Errorf("%s missing or not an object: %v", k, got[k])
					}
				}
			}
		})
	}
}

func inspectAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
