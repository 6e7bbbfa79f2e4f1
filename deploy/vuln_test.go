package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testenv"
)

// govulncheckTool returns the pinned govulncheck and the offline database
// (.ci/setup-govulncheck.sh), or skips.
func govulncheckTool(t *testing.T) (bin, dbURL string) {
	t.Helper()
	bin, db := os.Getenv("DELTASYNC_GOVULNCHECK"), os.Getenv("DELTASYNC_VULNDB")
	if bin == "" || db == "" {
		testenv.Missing(t, testenv.External, "DELTASYNC_GOVULNCHECK and DELTASYNC_VULNDB unset (.ci/setup-govulncheck.sh start)")
	}
	dbAbs, err := filepath.Abs(db)
	if err != nil {
		t.Fatal(err)
	}
	return bin, "file://" + filepath.ToSlash(dbAbs)
}

// TestGovulncheckRelease: what ships has no known vulnerability. govulncheck
// scans each release binary (.ci/release.sh, built with the release
// toolchain) and must report nothing: no accepted list applies here. The
// binaries are stripped (-s -w), so govulncheck cannot tell which symbols
// they hold and reports every vulnerability of each linked module version
// and of the standard library: the release must link no vulnerable version
// at all, which is stricter than the dev build's call-graph scan. (Source
// mode cannot scan the release build: govulncheck built with Go 1.26 fails
// to type-check Go 1.27's standard library.)
func TestGovulncheckRelease(t *testing.T) {
	bin, db := govulncheckTool(t)
	bins := releaseBinaries(t, releaseDist(t))
	if len(bins) == 0 {
		t.Fatal("no release binaries")
	}
	for target, path := range bins {
		cmd := exec.Command(bin, "-mode", "binary", "-db", db, "-format", "json", path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("govulncheck -mode binary %s: %v\n%s", path, err, stderr.String())
		}
		called, err := calledFindings(out)
		if err != nil {
			t.Fatal(err)
		}
		for id, where := range called {
			t.Errorf("%s: release binary has %s (%s): the release must ship none; upgrade the module or RELEASE_GOTOOLCHAIN", target, id, where)
		}
	}
}

// TestGovulncheck runs govulncheck (pinned; .ci/setup-govulncheck.sh) over
// the whole module as developers build it (the machine's Go toolchain)
// against an offline copy of the Go vulnerability database and fails on
// every vulnerability the code calls that is not listed, with its reason,
// in govulncheck-accepted.txt. An accepted entry that no longer shows up is
// reported too, so the list cannot go stale. The release build is
// TestGovulncheckRelease's, with no accepted list.
func TestGovulncheck(t *testing.T) {
	bin, db := govulncheckTool(t)
	if testing.Short() {
		t.Skip("govulncheck takes minutes")
	}
	cmd := exec.Command(bin, "-db", db, "-format", "json", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("govulncheck: %v\n%s", err, stderr.String())
	}
	called, err := calledFindings(out)
	if err != nil {
		t.Fatal(err)
	}
	accepted := acceptedVulns(t)
	var ids []string
	for id := range called {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if why, ok := accepted[id]; ok {
			t.Logf("accepted %s (%s): %s", id, called[id], why)
			continue
		}
		t.Errorf("%s is called (%s): fix it, or list it with the reason in deploy/govulncheck-accepted.txt", id, called[id])
	}
	for id := range accepted {
		if _, ok := called[id]; !ok {
			t.Errorf("%s is listed in govulncheck-accepted.txt but no longer reported: remove it", id)
		}
	}
}

// calledFindings reads govulncheck's JSON stream and returns the IDs of
// the vulnerabilities whose vulnerable function the code reaches, each with
// "module@version, fixed in version".
func calledFindings(stream []byte) (map[string]string, error) {
	type frame struct {
		Module   string `json:"module"`
		Version  string `json:"version"`
		Function string `json:"function"`
	}
	type msg struct {
		Finding *struct {
			OSV          string  `json:"osv"`
			FixedVersion string  `json:"fixed_version"`
			Trace        []frame `json:"trace"`
		} `json:"finding"`
	}
	out := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(stream))
	for dec.More() {
		var m msg
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		f := m.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue
		}
		out[f.OSV] = f.Trace[0].Module + "@" + f.Trace[0].Version + ", fixed in " + f.FixedVersion
	}
	return out, nil
}

// acceptedVulns reads govulncheck-accepted.txt: "ID reason..." per line,
// # comments.
func acceptedVulns(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("govulncheck-accepted.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, why, _ := strings.Cut(line, " ")
		if strings.TrimSpace(why) == "" {
			t.Errorf("govulncheck-accepted.txt: %s has no reason", id)
		}
		out[id] = strings.TrimSpace(why)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
