package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/rhysd/actionlint"
	"sigs.k8s.io/yaml"
)

// The example GitHub Actions workflow (deploy/ci/github-actions) is tested
// twice over: actionlint checks it as GitHub would read it (with
// shellcheck on its scripts when installed), and its jobs are run here,
// step by step, as a runner would: each run: script in bash with the
// workflow's, the job's and the step's env, GITHUB_OUTPUT and
// GITHUB_STEP_SUMMARY files, deltasync on PATH (this test binary, see
// TestMain) against the in-memory test catalog, and gh replaced by a stub
// that records each call and answers as the test sets it up. The uses:
// steps are played by the test: checkout is the work directory the
// config is in, upload-artifact keeps the file under its name.

const workflowFile = "../../deploy/ci/github-actions/deltasync.yaml"

// TestMain makes the test binary deltasync itself when it is started
// under that name (a symlink on the workflow's PATH).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "deltasync" {
		main()
	}
	os.Exit(m.Run())
}

type workflow struct {
	Env  map[string]string `json:"env"`
	Jobs map[string]struct {
		If    string            `json:"if"`
		Env   map[string]string `json:"env"`
		Steps []workflowStep    `json:"steps"`
	} `json:"jobs"`
}

type workflowStep struct {
	ID   string            `json:"id"`
	Name string            `json:"name"`
	If   string            `json:"if"`
	Uses string            `json:"uses"`
	Run  string            `json:"run"`
	Env  map[string]string `json:"env"`
	With map[string]any    `json:"with"`
}

func TestGitHubActionsWorkflowLints(t *testing.T) {
	data, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	opts := &actionlint.LinterOptions{}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = sc
	} else {
		t.Log("shellcheck not installed: the run: scripts are not shellchecked")
	}
	l, err := actionlint.NewLinter(io.Discard, opts)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(workflowFile, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("actionlint: %s", e)
	}
}

// ghRunner runs one workflow's jobs for the test.
type ghRunner struct {
	t     *testing.T
	wf    workflow
	work  string // the checkout: the config is here
	stub  string // gh's answers, calls and request bodies
	store string // artifacts uploaded, by run id and name
	path  string // PATH: deltasync and gh first
	runID int
}

// jobRun is what one job did: whether it succeeded, each step's outputs,
// its step summary and the files it uploaded.
type jobRun struct {
	ok        bool
	outputs   map[string]map[string]string
	summary   string
	artifacts map[string]string // name -> the uploaded file's path
}

func newGHRunner(t *testing.T, config string) *ghRunner {
	t.Helper()
	for _, tool := range []string{"bash", "jq"} { // both on GitHub's runners, as the workflow expects
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the workflow's scripts need %s: %v", tool, err)
		}
	}
	data, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	r := &ghRunner{t: t, work: t.TempDir(), stub: t.TempDir(), store: t.TempDir(), runID: 1000}
	if err := yaml.Unmarshal(data, &r.wf); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "deltasync")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "gh"), []byte(ghStub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(r.stub, "responses"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.path = bin + string(os.PathListSeparator) + os.Getenv("PATH")
	r.setConfig(config)
	return r
}

// setConfig writes the deltasync config the checkout holds.
func (r *ghRunner) setConfig(config string) {
	writeFile(r.t, r.work, "deltasync.yaml", config)
}

// ghStub is gh for the test: it logs each call (METHOD path, one a line),
// keeps each request body, answers from responses/<key> (the call's
// METHOD path with every other character than a letter or digit as _;
// {} when there is none), and for run download copies the artifact the
// test uploaded.
const ghStub = `#!/usr/bin/env bash
set -euo pipefail
d="$GH_STUB_DIR"
if [ "$1" = api ]; then
  shift
  method=GET input= path=
  while [ $# -gt 0 ]; do
    case "$1" in
      --method) method=$2; shift 2 ;;
      --input) input=$2; shift 2 ;;
      --paginate) shift ;;
      -*) echo "gh stub: unknown flag $1" >&2; exit 64 ;;
      *) path=$1; shift ;;
    esac
  done
  echo "$method $path" >> "$d/calls.log"
  n=$(wc -l < "$d/calls.log")
  if [ -n "$input" ]; then cp "$input" "$d/body-$n.json"; fi
  key=$(printf '%s' "$method $path" | tr -c 'A-Za-z0-9' '_')
  if [ -f "$d/responses/$key" ]; then cat "$d/responses/$key"; else echo '{}'; fi
  exit 0
fi
if [ "$1 $2" = "run download" ]; then
  run=$3; shift 3
  name= dir=.
  while [ $# -gt 0 ]; do
    case "$1" in
      --name) name=$2; shift 2 ;;
      --dir) dir=$2; shift 2 ;;
      *) echo "gh stub: unknown argument $1" >&2; exit 64 ;;
    esac
  done
  echo "DOWNLOAD $run $name" >> "$d/calls.log"
  mkdir -p "$dir"
  cp "$GH_ARTIFACTS/$run/$name/"* "$dir/"
  exit 0
fi
echo "gh stub: unexpected call: gh $*" >&2
exit 64
`

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// respond sets the stub's answer to METHOD path.
func (r *ghRunner) respond(methodPath string, v any) {
	r.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		r.t.Fatal(err)
	}
	writeFile(r.t, filepath.Join(r.stub, "responses"), nonAlnum.ReplaceAllString(methodPath, "_"), string(data))
}

// calls are the stub's calls so far; bodies the request bodies, by the
// call's 1-based number.
func (r *ghRunner) calls() []string {
	data, _ := os.ReadFile(filepath.Join(r.stub, "calls.log"))
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func (r *ghRunner) lastBody() (call, body string) {
	r.t.Helper()
	calls := r.calls()
	for i := len(calls); i > 0; i-- {
		data, err := os.ReadFile(filepath.Join(r.stub, "body-"+strconv.Itoa(i)+".json"))
		if err != nil {
			continue
		}
		var b struct{ Body string }
		if err := json.Unmarshal(data, &b); err != nil {
			r.t.Fatalf("request body of %s is no JSON {body}: %v\n%s", calls[i-1], err, data)
		}
		return calls[i-1], b.Body
	}
	r.t.Fatalf("no request body in %v", calls)
	return "", ""
}

// TestGitHubActionsWorkflow runs the example workflow's jobs against the
// test catalog: a pull request in sync (exit 0: the job succeeds, the
// comment says so, the plan is saved), then with drift (exit 2: the job
// succeeds, the one comment is updated with the plan, the plan saved),
// then failing (exit 1: the job fails); the merge of the drifted one
// applies its saved plan (the catalog is then in sync); and a saved plan
// the catalog moved away from is refused on merge (the job fails, the
// record keeps what the other writer put there).
func TestGitHubActionsWorkflow(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	config := "catalog:\n  url: " + tc.srv.URL() + "\n  token_env: DELTASYNC_CATALOG_TOKEN\n" +
		"tables:\n  - include: [\"cat.s.*\"]\n    on_destructive: hold\nstorage:\n  allowed_locations: [\"" + allowTemp() + "\"]\n"
	r := newGHRunner(t, config)
	r.respond("GET repos/o/r/issues/7/comments", []any{})

	// In sync.
	run := r.runJob("plan", pullRequestEvent("sha-a"))
	call, body := r.lastBody()
	if !run.ok || run.outputs["plan"]["exit-code"] != "0" || call != "POST repos/o/r/issues/7/comments" ||
		!strings.HasPrefix(body, "<!-- deltasync-plan -->\n✅ **In sync**") || !strings.Contains(body, "1 in sync") {
		t.Fatalf("in sync: ok %v, outputs %v, %s:\n%s", run.ok, run.outputs, call, body)
	}
	if _, err := os.Stat(run.artifacts["deltasync-plan-sha-a"]); err != nil {
		t.Errorf("in sync: plan not saved: %v", err)
	}
	r.respond("GET repos/o/r/issues/7/comments", []any{
		map[string]any{"id": 55, "user": map[string]any{"type": "User"}, "body": "<!-- deltasync-plan --> a person's"},
		map[string]any{"id": 101, "user": map[string]any{"type": "Bot"}, "body": body}})

	// Drift: a destructive change, held by the rule; the plan carries it.
	tc.mutate("t", func(tb *uctest.Table) { tb.Properties["stray"] = "x" })
	run = r.runJob("plan", pullRequestEvent("sha-b"))
	call, body = r.lastBody()
	if !run.ok || run.outputs["plan"]["exit-code"] != "2" || call != "PATCH repos/o/r/issues/comments/101" ||
		!strings.Contains(body, "📝 **Drift**") || !strings.Contains(body, "deltasync-plan-sha-b") ||
		!strings.Contains(body, "| ⚠️ **destructive** | <code>property stray</code>: remove") {
		t.Fatalf("drift: ok %v, outputs %v, %s:\n%s", run.ok, run.outputs, call, body)
	}
	if !strings.Contains(run.summary, "<code>property stray</code>") {
		t.Errorf("drift: the step summary has no plan:\n%s", run.summary)
	}
	saved := run.artifacts["deltasync-plan-sha-b"]
	if data, err := os.ReadFile(saved); err != nil || !strings.Contains(string(data), "deltasync-saved-plan") {
		t.Fatalf("drift: saved plan %s: %v\n%s", saved, err, data)
	}
	planRun := r.runID

	// Error: a catalog that is not there.
	r.setConfig(strings.Replace(config, tc.srv.URL(), "http://127.0.0.1:1/api/2.1/unity-catalog", 1))
	run = r.runJob("plan", pullRequestEvent("sha-c"))
	_, body = r.lastBody()
	if run.ok || run.outputs["plan"]["exit-code"] != "1" || !strings.Contains(body, "❌ **deltasync plan failed** (exit 1)") ||
		len(run.artifacts) != 0 {
		t.Fatalf("error: ok %v, outputs %v, artifacts %v:\n%s", run.ok, run.outputs, run.artifacts, body)
	}
	r.setConfig(config)

	// The merge of sha-b applies its saved plan.
	merge := func(mergeSHA, headSHA string, planRun int) jobRun {
		r.respond("GET repos/o/r/commits/"+mergeSHA+"/pulls", []any{map[string]any{"number": 7, "merged_at": "2026-12-06T09:00:00Z",
			"head": map[string]any{"sha": headSHA}}})
		r.respond("GET repos/o/r/actions/artifacts?name=deltasync-plan-"+headSHA, map[string]any{"artifacts": []any{
			map[string]any{"expired": false, "workflow_run": map[string]any{"id": planRun}}}})
		return r.runJob("apply", pushEvent(mergeSHA))
	}
	tc.srv.ResetRequests()
	run = merge("merge-b", "sha-b", planRun)
	call, body = r.lastBody()
	if !run.ok || run.outputs["apply"]["exit-code"] != "0" || tc.updates() != 1 || call != "POST repos/o/r/issues/7/comments" ||
		!strings.Contains(body, "✅ **deltasync apply**") || !strings.Contains(body, "cat.s.t: applied") {
		t.Fatalf("merge: ok %v, outputs %v, %d updates, %s:\n%s", run.ok, run.outputs, tc.updates(), call, body)
	}
	if code, out, errOut := runCLI(t, map[string]string{"DELTASYNC_CATALOG_TOKEN": "uc-token"},
		"plan", "--config", filepath.Join(r.work, "deltasync.yaml"), "--log-level", "error"); code != 0 {
		t.Errorf("after the merge the catalog is not in sync: exit %d\n%s\n%s", code, out, errOut)
	}

	// A plan the catalog moved away from before the merge: refused.
	tc.mutate("t", func(tb *uctest.Table) { tb.Properties["stray"] = "y" })
	run = r.runJob("plan", pullRequestEvent("sha-d"))
	if !run.ok || run.outputs["plan"]["exit-code"] != "2" {
		t.Fatalf("stale: plan: ok %v, outputs %v", run.ok, run.outputs)
	}
	tc.mutate("t", func(tb *uctest.Table) { tb.Properties["other"] = "z" })
	run = merge("merge-d", "sha-d", r.runID)
	_, body = r.lastBody()
	if run.ok || run.outputs["apply"]["exit-code"] != "1" ||
		!strings.Contains(body, "❌ **deltasync apply refused or failed** (exit 1)") || !strings.Contains(body, "plan again") {
		t.Fatalf("stale merge: ok %v, outputs %v:\n%s", run.ok, run.outputs, body)
	}
	lt, err := tc.client.LoadTable(context.Background(), catalog.TableName{Catalog: "cat", Schema: "s", Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if p := lt.Metadata.Properties; p["stray"] != "y" || p["other"] != "z" {
		t.Errorf("stale merge wrote the record: properties %v", p)
	}
}
