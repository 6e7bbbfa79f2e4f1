package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ghEvent is the expression context of one workflow run: github.* and
// secrets.* by their dotted names.
type ghEvent map[string]string

func pullRequestEvent(headSHA string) ghEvent {
	return ghEvent{"github.event_name": "pull_request", "github.repository": "o/r", "github.sha": "test-merge-" + headSHA,
		"github.event.pull_request.head.repo.full_name": "o/r", "github.event.pull_request.number": "7",
		"github.event.pull_request.head.sha": headSHA, "github.token": "ghs_test", "secrets.DELTASYNC_CATALOG_TOKEN": "uc-token"}
}

func pushEvent(sha string) ghEvent {
	return ghEvent{"github.event_name": "push", "github.repository": "o/r", "github.sha": sha,
		"github.token": "ghs_test", "secrets.DELTASYNC_CATALOG_TOKEN": "uc-token"}
}

var ghExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// value is a context name's value: the event's, or a step's output
// (steps.ID.outputs.NAME; "" when unset, as GitHub's null compares).
// Any other expression fails the test: teach it here first.
func (r *ghRunner) value(ev ghEvent, outputs map[string]map[string]string, name string) string {
	r.t.Helper()
	if v, ok := ev[name]; ok {
		return v
	}
	if p := strings.Split(name, "."); len(p) == 4 && p[0] == "steps" && p[2] == "outputs" {
		return outputs[p[1]][p[3]]
	}
	if strings.HasPrefix(name, "github.") || strings.HasPrefix(name, "secrets.") {
		return "" // absent from this event
	}
	r.t.Fatalf("workflow expression %q: the test does not evaluate it", name)
	return ""
}

// subst replaces each ${{ name }} in s.
func (r *ghRunner) subst(ev ghEvent, outputs map[string]map[string]string, s string) string {
	return ghExpr.ReplaceAllStringFunc(s, func(m string) string {
		return r.value(ev, outputs, ghExpr.FindStringSubmatch(m)[1])
	})
}

var ghCompare = regexp.MustCompile(`^(\S+)\s*(==|!=)\s*(\S+)$`)

// cond evaluates an if: of ||s of &&s of comparisons (empty: true).
func (r *ghRunner) cond(ev ghEvent, outputs map[string]map[string]string, expr string) bool {
	r.t.Helper()
	expr = strings.TrimSpace(expr)
	if m := ghExpr.FindStringSubmatch(expr); m != nil && m[0] == expr {
		expr = m[1]
	}
	if expr == "" {
		return true
	}
	operand := func(s string) string {
		if strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'") && len(s) >= 2 {
			return s[1 : len(s)-1]
		}
		return r.value(ev, outputs, s)
	}
	for _, or := range strings.Split(expr, "||") {
		all := true
		for _, and := range strings.Split(or, "&&") {
			m := ghCompare.FindStringSubmatch(strings.TrimSpace(and))
			if m == nil {
				r.t.Fatalf("if: %q: the test evaluates only comparisons joined by && and ||", expr)
			}
			if (operand(m[1]) == operand(m[3])) != (m[2] == "==") {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

// runJob runs job for ev as a runner would: its if:, then each step
// whose if: holds, until one fails.
func (r *ghRunner) runJob(name string, ev ghEvent) jobRun {
	r.t.Helper()
	job, ok := r.wf.Jobs[name]
	if !ok {
		r.t.Fatalf("workflow has no job %s", name)
	}
	r.runID++
	run := jobRun{ok: true, outputs: map[string]map[string]string{}, artifacts: map[string]string{}}
	if !r.cond(ev, nil, job.If) {
		r.t.Fatalf("job %s does not run on %s", name, ev["github.event_name"])
	}
	summary := filepath.Join(r.t.TempDir(), "step_summary")
	for i, st := range job.Steps {
		if !r.cond(ev, run.outputs, st.If) {
			continue
		}
		var err error
		switch {
		case st.Run != "" && st.ID == "install":
			continue // deltasync is this test binary, on PATH
		case st.Run != "":
			err = r.runScript(ev, job.Env, st, &run, summary)
		default:
			err = r.uses(ev, run.outputs, st, &run)
		}
		if err != nil {
			r.t.Logf("job %s step %d (%s%s) failed: %v", name, i, st.Name, st.Uses, err)
			run.ok = false
			break
		}
	}
	data, _ := os.ReadFile(summary)
	run.summary = string(data)
	return run
}

// runScript runs a run: step in bash as GitHub runs shell: bash.
func (r *ghRunner) runScript(ev ghEvent, jobEnv map[string]string, st workflowStep, run *jobRun, summary string) error {
	dir := r.t.TempDir()
	script, output := filepath.Join(dir, "step.sh"), filepath.Join(dir, "output")
	writeFile(r.t, dir, "step.sh", st.Run)
	writeFile(r.t, dir, "output", "")
	env := []string{"PATH=" + r.path, "HOME=" + dir, "TMPDIR=" + os.TempDir(), "GITHUB_OUTPUT=" + output,
		"GITHUB_STEP_SUMMARY=" + summary, "GITHUB_REPOSITORY=" + ev["github.repository"], "GITHUB_SHA=" + ev["github.sha"],
		"GITHUB_RUN_ID=" + strconv.Itoa(r.runID), "GITHUB_SERVER_URL=https://github.com",
		"GH_STUB_DIR=" + r.stub, "GH_ARTIFACTS=" + r.store}
	for _, m := range []map[string]string{r.wf.Env, jobEnv, st.Env} {
		for k, v := range m {
			env = append(env, k+"="+r.subst(ev, run.outputs, v))
		}
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir, cmd.Env = r.work, env
	out, err := cmd.CombinedOutput()
	r.t.Logf("step %s:\n%s", st.ID, out)
	data, _ := os.ReadFile(output)
	if st.ID != "" {
		run.outputs[st.ID] = map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				run.outputs[st.ID][k] = v
			}
		}
	}
	return err
}

// uses plays an action: checkout and setup-go are the test's own set-up;
// upload-artifact keeps the file under the artifact's name.
func (r *ghRunner) uses(ev ghEvent, outputs map[string]map[string]string, st workflowStep, run *jobRun) error {
	action, _, _ := strings.Cut(st.Uses, "@")
	switch action {
	case "actions/checkout", "actions/setup-go":
		return nil
	case "actions/upload-artifact":
		name, path := r.subst(ev, outputs, fmt.Sprint(st.With["name"])), fmt.Sprint(st.With["path"])
		data, err := os.ReadFile(filepath.Join(r.work, path))
		if err != nil {
			return fmt.Errorf("upload-artifact %s: %w", name, err) // if-no-files-found: error
		}
		dir := filepath.Join(r.store, strconv.Itoa(r.runID), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		run.artifacts[name] = filepath.Join(dir, filepath.Base(path))
		return os.WriteFile(run.artifacts[name], data, 0o600)
	}
	r.t.Fatalf("uses: %s: the test does not play this action", st.Uses)
	return nil
}
