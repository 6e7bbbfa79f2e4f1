package sync_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// soakTables is how many tables the kill -9 soak keeps in sync.
const soakTables = 20

// dirStates reads each version's full state from the live table
// directories written by delta-rs: version v is replayed from a copy of the
// log's files up to v (commits are immutable), and cached.
type dirStates struct {
	t    *testing.T
	root string

	mu    gosync.Mutex
	cache map[string]plan.LogState // "table@v"
}

func (d *dirStates) url(table string) string { return "file://" + filepath.Join(d.root, table) }

func (d *dirStates) stateAt(table string, v int64) (plan.LogState, bool) {
	key := table + "@" + strconv.FormatInt(v, 10)
	d.mu.Lock()
	s, ok := d.cache[key]
	d.mu.Unlock()
	if ok {
		return s, true
	}
	src := filepath.Join(d.root, table, "_delta_log")
	dst := filepath.Join(d.t.TempDir(), table)
	if err := os.MkdirAll(filepath.Join(dst, "_delta_log"), 0o755); err != nil {
		d.t.Error(err)
		return plan.LogState{}, false
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		d.t.Error(err)
		return plan.LogState{}, false
	}
	for _, e := range ents {
		name := e.Name()
		if len(name) < 20 || !strings.HasSuffix(name, ".json") {
			continue // _last_checkpoint, temp files, checkpoints (none below 100 commits)
		}
		n, err := strconv.ParseInt(name[:20], 10, 64)
		if err != nil || n > v {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			d.t.Error(err)
			return plan.LogState{}, false
		}
		if err := os.WriteFile(filepath.Join(dst, "_delta_log", name), b, 0o644); err != nil {
			d.t.Error(err)
			return plan.LogState{}, false
		}
	}
	s, err = d.load(dst, table)
	if err != nil || s.Version != v {
		return plan.LogState{}, false
	}
	d.mu.Lock()
	d.cache[key] = s
	d.mu.Unlock()
	return s, true
}

func (d *dirStates) load(dir, table string) (plan.LogState, error) {
	ctx := context.Background()
	tbl, err := deltalog.Open(ctx, "file://"+dir)
	if err != nil {
		return plan.LogState{}, err
	}
	defer tbl.Close()
	snap, err := tbl.Load(ctx, deltalog.LoadOptions{})
	if err != nil {
		return plan.LogState{}, err
	}
	return sync.LogStateOf(snap, d.url(table)), nil
}

func (d *dirStates) withLatest(table string, f func(plan.LogState)) {
	s, err := d.load(filepath.Join(d.root, table), table)
	if err != nil {
		d.t.Errorf("reading %s: %v", table, err)
		return
	}
	f(s)
}

// files lists every file under root (path → sha256).
func files(t *testing.T, root string) map[string]string {
	out := dirStore{root: root}.objects(t)
	delete(out, "STOP")
	return out
}

// soakAudit checks that nothing but delta-rs wrote under root: every file
// present before is unchanged, and every new file is a commit, or a data
// file of a table.
func soakAudit(before, after map[string]string) []string {
	var bad []string
	commit := regexp.MustCompile(`^t\d\d/_delta_log/\d{20}\.json$`)
	data := regexp.MustCompile(`^t\d\d/[^/]+\.parquet$`)
	for k, h := range before {
		if after[k] != h {
			bad = append(bad, "changed or removed: "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok && !commit.MatchString(k) && !data.MatchString(k) {
			bad = append(bad, "unexpected new file: "+k)
		}
	}
	return bad
}

// TestSoakKill9 is the kill -9 soak: 20 tables written by delta-rs while the
// real `deltasync run` binary is SIGKILLed at chosen moments (while
// listing tables, while reading logs, between an update and its reload, and
// at random) and restarted. The invariants are watched the whole time;
// finally `deltasync once` must find every table in sync.
//
// Kills: 20 by default, 200 with DELTASYNC_SOAK_LONG=1, or
// DELTASYNC_SOAK_KILLS=n.
func TestSoakKill9(t *testing.T) {
	testenv.Suite(t)
	py := deltarsPython(t)
	kills := 20
	if os.Getenv("DELTASYNC_SOAK_LONG") == "1" {
		kills = 200
	}
	if n, err := strconv.Atoi(os.Getenv("DELTASYNC_SOAK_KILLS")); err == nil && n > 0 {
		kills = n
	}
	bin := filepath.Join(t.TempDir(), "deltasync")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/deltasync").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/deltasync: %v\n%s", err, out)
	}
	e := newEnvAt(t, ucBase(t))
	if e.srv != nil {
		t.Log("catalog: uctest")
	}
	ctx := context.Background()
	root := t.TempDir()
	writer := filepath.Join("testdata", "deltars", "soak_writer.py")
	if out, err := exec.Command(py, writer, "create", root, strconv.Itoa(soakTables)).CombinedOutput(); err != nil {
		t.Fatalf("delta-rs create: %v\n%s", err, out)
	}
	src := &dirStates{t: t, root: root, cache: map[string]plan.LogState{}}
	names := map[string]catalog.TableName{}
	for i := range soakTables {
		table := fmt.Sprintf("t%02d", i)
		if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, filepath.Join(root, table)), e.name(table), src.url(table)); err != nil {
			t.Fatalf("register %s: %v", table, err)
		}
		names[table] = e.name(table)
	}
	before := files(t, root)
	chk := newChecker(t, e.client, src, names)

	// The daemon reaches the catalog through the fault proxy, whose hooks
	// check every update and SIGKILL the daemon at the chosen moment.
	fp := newFaultProxy(t, e.client.BaseURL())
	var pid atomic.Int64 // the running daemon, 0 when none
	var moment atomic.Value
	moment.Store("")
	killed := make(chan string, 1)
	killPid := func(p int64, why string) { // kills p if it is still the running daemon
		if p != 0 && pid.CompareAndSwap(p, 0) {
			_ = syscall.Kill(int(p), syscall.SIGKILL)
			select {
			case killed <- why:
			default:
			}
		}
	}
	kill := func(why string) { killPid(pid.Load(), why) }
	isListing := func(r *http.Request) bool {
		return r.Method == http.MethodGet && (strings.HasSuffix(r.URL.Path, "/tables") || strings.HasSuffix(r.URL.Path, "/schemas"))
	}
	isLoad := func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/delta/v1/") && tableOfPath(r.URL.Path) != ""
	}
	fp.set(func() {
		fp.before = func(r *http.Request, body []byte) {
			chk.beforeUpdate(r, body)
			if moment.Load() == "listing" && isListing(r) {
				kill("listing")
			}
		}
		fp.after = func(r *http.Request, code int) {
			switch m := moment.Load(); {
			case m == "log-read" && isLoad(r) && code == http.StatusOK:
				// The record is loaded; the log read comes next.
				// (A delayed kill must not hit the next daemon: it names its pid.)
				p := pid.Load()
				go func() { time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond); killPid(p, "log-read") }()
			case m == "after-update" && isUpdateTable(r) && code/100 == 2:
				kill("after-update") // the update is applied; the reload has not happened
			}
		}
	})
	cfg := filepath.Join(t.TempDir(), "deltasync.yaml")
	conf := fmt.Sprintf(`catalog:
  url: %s
  timeout: 5s
storage:
  allowed_locations: ["file://%s/**"]
tables:
  - include: ["%s.s.*"]
    mode: sync
schedule: "@every 1s"
jitter: 0s
concurrency: 4
backoff:
  initial: 100ms
  max: 1s
listen: 127.0.0.1:0
log:
  format: json
  level: info
`, strings.Replace(e.client.BaseURL(), hostOf(t, e.client.BaseURL()), hostOf(t, fp.srv.URL), 1), filepath.ToSlash(root), e.catalog)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logDir := t.TempDir()

	// delta-rs commits all along.
	wcmd := exec.Command(py, writer, "run", root, strconv.Itoa(soakTables), strconv.FormatInt(time.Now().UnixNano()%1000, 10))
	wout, err := os.Create(filepath.Join(logDir, "writer.log"))
	if err != nil {
		t.Fatal(err)
	}
	wcmd.Stdout, wcmd.Stderr = wout, wout
	if err := wcmd.Start(); err != nil {
		t.Fatal(err)
	}
	writerDone := make(chan error, 1)
	go func() { writerDone <- wcmd.Wait() }()
	stopWriter := func() {
		_ = os.WriteFile(filepath.Join(root, "STOP"), nil, 0o644)
		select {
		case err := <-writerDone:
			if err != nil {
				t.Errorf("delta-rs writer: %v (log %s)", err, wout.Name())
			}
		case <-time.After(time.Minute):
			_ = wcmd.Process.Kill()
			t.Error("delta-rs writer did not stop")
		}
		writerDone = nil
	}
	defer func() {
		if writerDone != nil {
			stopWriter()
		}
	}()

	chk.start()
	moments := []string{"listing", "log-read", "after-update", "random"}
	fired := map[string]int{}
	for i := range kills {
		m := moments[i%len(moments)]
		cmd := exec.Command(bin, "run", "--config", cfg)
		lf, err := os.Create(filepath.Join(logDir, fmt.Sprintf("run-%03d.log", i)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = lf, lf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid.Store(int64(cmd.Process.Pid))
		// Let it start and run a little before arming the moment.
		time.Sleep(time.Duration(100+rand.IntN(400)) * time.Millisecond)
		why := "random"
		if m != "random" {
			moment.Store(m)
			select {
			case why = <-killed:
			case <-time.After(10 * time.Second):
				why = "random (" + m + " did not come within 10s)"
			}
			moment.Store("")
		}
		kill(why)
		select {
		case <-killed:
		default:
		}
		_ = cmd.Wait()
		lf.Close()
		fired[why]++
	}
	stopWriter()
	// After the last kill: one `deltasync once` brings every table in sync.
	out, err := exec.Command(bin, "once", "--config", cfg).CombinedOutput()
	if err != nil {
		t.Errorf("deltasync once after the soak: %v\n%s", err, tail(out, 4000))
	}
	t.Logf("once: %s", lastLine(out))
	time.Sleep(60 * time.Millisecond)
	chk.stopPolling()
	outOf := chk.outOfSync(ctx)
	for _, o := range outOf {
		t.Errorf("out of sync after the soak: %s", o)
	}
	for _, bad := range soakAudit(before, files(t, root)) {
		chk.violate("storage: %s", bad)
	}
	for _, v := range chk.violationList() {
		t.Errorf("invariant violated: %s", v)
	}
	cycles := countCycles(logDir)
	commits := countLines(t, wout.Name())
	t.Logf("soak: %d kills %v, %d cycles finished, %d delta-rs commits, %d updates seen (and %d bodies cut short by a kill), %d polls",
		kills, fired, cycles, commits, chk.updates.Load(), chk.truncated.Load(), chk.polls.Load())
	if commits == 0 || chk.updates.Load() == 0 {
		t.Errorf("the soak proves nothing: %d commits, %d updates", commits, chk.updates.Load())
	}
	for _, m := range moments[:3] {
		if fired[m] == 0 {
			t.Errorf("no kill happened while %s", m)
		}
	}
	reportRow(t, reliabilityRow{Fault: fmt.Sprintf("kill -9 of `deltasync run` (listing %d, log read %d, between update and reload %d, random %d) with delta-rs writing",
		fired["listing"], fired["log-read"], fired["after-update"], kills-fired["listing"]-fired["log-read"]-fired["after-update"]),
		Injected: kills, Cycles: cycles + 1, Violations: chk.violationCount(), InSync: soakTables - len(outOf), Tables: soakTables,
		Truncated: int(chk.truncated.Load())})
}

// countCycles counts "cycle finished" log lines in the daemons' logs.
func countCycles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "run-") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l struct {
				Msg string `json:"msg"`
			}
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "cycle finished" {
				n++
			}
		}
		return nil
	})
	return n
}

func countLines(t *testing.T, p string) int {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
