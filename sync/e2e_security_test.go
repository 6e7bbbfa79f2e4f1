package sync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/prometheus/client_golang/prometheus"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"

	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/location"
	"github.com/deltasync/deltasync/sync/metrics"
)

// The attacks of issue 14: someone who may only create or alter external
// tables in the catalog tries to steer deltasync's storage access. Each
// record is created through the catalog's API (the real Unity Catalog
// server when DELTASYNC_UC_URL is set); each test asserts that no request
// reaches the attacker, nothing of the protected data reaches the catalog
// or the output, and the table is flagged with a clear reason.

// secretMarker is planted in the protected table: column name, property
// value and description.
const secretMarker = "ZZSECRET9731"

// protectedTable writes a Delta log whose schema, configuration and
// description carry secretMarker, and returns its directory.
func protectedTable(t *testing.T, dir string) string {
	t.Helper()
	return oneCommitTable(t, dir, secretMarker)
}

// oneCommitTable writes a version-0 Delta log whose column name,
// description and property value carry word.
func oneCommitTable(t testing.TB, dir, word string) string {
	t.Helper()
	schema := `{\"type\":\"struct\",\"fields\":[{\"name\":\"` + word + `_col\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}`
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
		`{"metaData":{"id":"p","description":"` + word + `","format":{"provider":"parquet","options":{}},"schemaString":"` + schema +
		`","partitionColumns":[],"configuration":{"db.password":"` + word + `"},"createdTime":1}}` + "\n" +
		`{"commitInfo":{"timestamp":1700000000000}}` + "\n"
	p := filepath.Join(dir, "_delta_log", "00000000000000000000.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(commit), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// plant registers a catalog record named table at location, with the
// harmless metadata of a corpus table: what an attacker with catalog
// access alone can do.
func (e *env) plant(table, location string) {
	e.t.Helper()
	if err := e.tryPlant(table, location); err != nil {
		e.t.Fatalf("planting %s at %s: %v", table, location, err)
	}
}

// tryPlant is plant, returning the catalog's refusal.
func (e *env) tryPlant(table, location string) error {
	e.t.Helper()
	// A harmless version-0 record, so that a daemon reading the location
	// would find it behind and push what it read.
	dir := oneCommitTable(e.t, filepath.Join(e.t.TempDir(), "decoy"), "harmless")
	_, err := sync.Register(context.Background(), kindOf(e.client), snapshot(e.t, dir), e.name(table), location)
	return err
}

// listener is the attacker's endpoint: it records every request.
type listener struct {
	*httptest.Server
	mu   stdsync.Mutex
	reqs []string
}

func newListener(t *testing.T) *listener {
	l := &listener{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Method+" "+r.URL.String()+" auth="+r.Header.Get("Authorization"))
		l.mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *listener) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs...)
}

// outputs renders everything a cycle shows: the report as text and JSON,
// the status page data and the metrics.
func outputs(t *testing.T, r *sync.Reconciler, rep *sync.Report, reg *prometheus.Registry) string {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	st, _ := json.Marshal(r.Status())
	b.Write(st)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		b.WriteString(mf.String())
	}
	return b.String()
}

// catalogView is everything the catalog holds about a table, as JSON.
func (e *env) catalogView(table string) string {
	e.t.Helper()
	rec := e.record(table)
	b, _ := json.Marshal(rec)
	return string(b)
}

// assertRefused checks a table's result: flagged with the location reason,
// no plan, and nothing of the protected data anywhere.
func assertRefused(t *testing.T, e *env, rep *sync.Report, out, table, wantReason string) {
	t.Helper()
	res := findResult(t, rep, e.name(table).String())
	if res.Outcome != sync.OutcomeFlagged || res.ErrorReason != sync.ReasonLocation || res.Plan != nil ||
		!strings.Contains(res.Reason, wantReason) {
		t.Errorf("%s: %s/%s %q plan=%v; want flagged for location, reason containing %q",
			table, res.Outcome, res.ErrorReason, res.Reason, res.Plan != nil, wantReason)
	}
	if strings.Contains(out, secretMarker) {
		t.Errorf("%s: the output holds the protected table's content", table)
	}
	if v := e.catalogView(table); strings.Contains(v, secretMarker) {
		t.Errorf("%s: the catalog now holds the protected table's content: %s", table, v)
	}
}

func findResult(t *testing.T, rep *sync.Report, name string) sync.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Table == name {
			return r
		}
	}
	t.Fatalf("no result for %s in %s", name, rep.Summary())
	return sync.Result{}
}

func policy(t *testing.T, allowed []string, buckets ...sync.BucketOptions) *sync.StoragePolicy {
	t.Helper()
	p, err := sync.NewStoragePolicy(allowed, buckets)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Attack 1: a location whose query names the attacker's endpoint. Neither
// with the default allow-list nor with the bucket allowed does any request
// reach the listener; a legitimate table in an allowed bucket, reached
// through the endpoint configured for it, still syncs.
func TestAttackQueryEndpoint(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIADELTASYNCDAEMON1")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "daemon-secret-key")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	evil := newListener(t)

	// The legitimate lake: a gofakes3 bucket holding a real table.
	backend := s3mem.New()
	s3srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(s3srv.Close)
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "good")
	copyLog(t, "basic_partitioned", src, -1)
	lake := map[string]string{"endpoint": s3srv.URL, "use_path_style": "true", "region": "us-east-1", "disable_https": "true"}
	uploadDir(t, "s3://lake/wh/good?endpoint="+s3srv.URL+"&use_path_style=true&region=us-east-1&disable_https=true", src)

	e := newEnv(t)
	if _, err := sync.Register(context.Background(), kindOf(e.client), snapshot(t, src), e.name("good"), "s3://lake/wh/good"); err != nil {
		t.Fatal(err)
	}
	// The endpoint is escaped so that no normalisation of the location
	// (collapsing "//") spoils the attack before deltasync sees it.
	attack := "s3://lake/wh/t?endpoint=" + url.QueryEscape(evil.URL) + "&region=us-east-1&use_path_style=true"
	e.plant("query_endpoint", attack)
	attacks := []string{"query_endpoint"}
	// UC OSS 0.6 refuses s3a:// locations; uctest (like Databricks) takes them.
	if err := e.tryPlant("query_endpoint_s3a", strings.Replace(attack, "s3://", "s3a://", 1)); err == nil {
		attacks = append(attacks, "query_endpoint_s3a")
	} else {
		t.Logf("the catalog refuses the s3a form itself: %v", err)
	}

	for _, tc := range []struct {
		name   string
		pol    *sync.StoragePolicy
		vended bool
	}{
		{"default allow-list", nil, false},
		{"bucket allowed", policy(t, []string{"s3://lake/wh/**"}, sync.BucketOptions{Location: "s3://lake", Options: lake}), false},
		// Refused before any credentials are vended, so none can be sent
		// to the attacker's endpoint either.
		{"vended credentials", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := metrics.New(reg, "test")
			r := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".s.*"}, Mode: sync.ModeSync}},
				func(o *sync.Options) { o.Storage, o.Metrics, o.VendedCredentials = tc.pol, m, tc.vended })
			rep := r.Sync(context.Background())
			out := outputs(t, r, rep, reg)
			for _, table := range attacks {
				assertRefused(t, e, rep, out, table, "query parameters")
			}
			if got := errorsTotal(t, reg, sync.ReasonLocation); got < float64(len(attacks)) {
				t.Errorf("deltasync_errors_total{reason=location} = %v, want >= %d", got, len(attacks))
			}
			if reqs := evil.requests(); len(reqs) > 0 {
				t.Fatalf("requests reached the attacker's endpoint: %v", reqs)
			}
			if strings.Contains(out, evil.URL) {
				t.Errorf("output repeats the attacker's endpoint")
			}
			if e.srv != nil && tc.vended {
				for _, req := range e.srv.Requests() {
					if strings.Contains(req.Path, "credentials") && strings.Contains(req.Path+string(req.Body), "query_endpoint") {
						t.Errorf("credentials were vended for a refused table: %s %s", req.Method, req.Path)
					}
				}
			}
			if tc.pol != nil {
				if res := findResult(t, rep, e.name("good").String()); res.Outcome != sync.OutcomeUnchanged {
					t.Errorf("legitimate table in the allowed bucket: %s %s", res.Outcome, res.Reason)
				}
			}
		})
	}
}

// uploadDir copies a local table to the bucket URL.
func uploadDir(t *testing.T, bucketURL, dir string) {
	t.Helper()
	ctx := context.Background()
	b, err := openBucketForTest(ctx, bucketURL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return b.WriteAll(ctx, filepath.ToSlash(rel), data, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Attack 2: a record pointing at a directory only the daemon may read.
// Attack 3: file-existence oracle (a file, a directory, nothing at all).
// Attack 4: Hadoop's file:/path, once read relative to the working dir.
// Refused alike, with the default allow-list and with another directory
// allowed; the messages differ only in the path.
func TestAttackLocalPaths(t *testing.T) {
	base := t.TempDir()
	protected := protectedTable(t, filepath.Join(base, "protected"))
	lake := filepath.Join(base, "lake")
	if err := os.MkdirAll(lake, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	planted := map[string]string{
		"protected_dir":    "file://" + filepath.ToSlash(protected),
		"protected_hadoop": "file:" + filepath.ToSlash(protected),
		"oracle_file":      "file:///etc/passwd",
		"oracle_dir":       "file:///etc",
		"oracle_missing":   "file:///no/such/dir/here",
		"dotdot":           "file://" + filepath.ToSlash(lake) + "/../protected",
	}
	for table, loc := range planted {
		e.plant(table, loc)
	}
	for _, tc := range []struct {
		name string
		pol  *sync.StoragePolicy
	}{
		{"default allow-list", nil},
		{"another dir allowed", policy(t, []string{"file://" + filepath.ToSlash(lake) + "/**"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			for _, dry := range []bool{true, false} { // plan, then once
				r := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".s.*"}, Mode: sync.ModeSync}},
					func(o *sync.Options) { o.Storage, o.DryRun = tc.pol, dry })
				rep := r.Sync(context.Background())
				out := outputs(t, r, rep, reg)
				reasons := map[string]string{}
				for table, loc := range planted {
					want := "outside storage.allowed_locations"
					if table == "dotdot" {
						want = "" // UC OSS cleans ".." away itself; uctest keeps it and deltasync refuses it
					}
					assertRefused(t, e, rep, out, table, want)
					res := findResult(t, rep, e.name(table).String())
					reasons[table] = strings.Replace(res.Reason, location.Normalize(loc), "LOC", 1)
					if st := statusOf(r, e.name(table).String()); st.LastError != res.Reason {
						t.Errorf("%s: status page shows %q, want %q", table, st.LastError, res.Reason)
					}
				}
				for _, table := range []string{"oracle_dir", "oracle_missing", "protected_dir", "protected_hadoop"} {
					if reasons[table] != reasons["oracle_file"] {
						t.Errorf("refusals differ (an existence oracle): %s %q vs oracle_file %q", table, reasons[table], reasons["oracle_file"])
					}
				}
			}
		})
	}
}

func statusOf(r *sync.Reconciler, name string) sync.TableStatus {
	for _, s := range r.Status() {
		if s.Table == name {
			return s
		}
	}
	return sync.TableStatus{}
}

// Attack 5: an allowed table directory whose log is a symlink into the
// protected directory. The symlink is not followed; the table is flagged.
func TestAttackSymlinkOutOfAllowedTable(t *testing.T) {
	base := t.TempDir()
	protected := protectedTable(t, filepath.Join(base, "protected"))
	lake := filepath.Join(base, "lake")
	links := map[string]func(dir string) error{
		"log_dir_link": func(dir string) error {
			return os.Symlink(filepath.Join(protected, "_delta_log"), filepath.Join(dir, "_delta_log"))
		},
		"commit_link": func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(protected, "_delta_log", "00000000000000000000.json"),
				filepath.Join(dir, "_delta_log", "00000000000000000000.json"))
		},
		"root_link": func(dir string) error { return os.Symlink(protected, dir) },
	}
	e := newEnv(t)
	for table, mk := range links {
		dir := filepath.Join(lake, table)
		if table != "root_link" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.MkdirAll(lake, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := mk(dir); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
		e.plant(table, "file://"+filepath.ToSlash(dir))
	}
	reg := prometheus.NewRegistry()
	r := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".s.*"}, Mode: sync.ModeSync}},
		func(o *sync.Options) { o.Storage = policy(t, []string{"file://" + filepath.ToSlash(lake) + "/**"}) })
	rep := r.Sync(context.Background())
	out := outputs(t, r, rep, reg)
	if strings.Contains(out, secretMarker) {
		t.Errorf("the output holds the protected table's content")
	}
	for table := range links {
		res := findResult(t, rep, e.name(table).String())
		// The symlinked _delta_log is not followed: to deltasync the
		// location holds no log, which is what an orphan is.
		orphan := table == "log_dir_link" && res.Outcome == sync.OutcomeOrphaned && res.ErrorReason == sync.ReasonOrphaned && res.Plan == nil
		switch {
		case orphan:
		case res.Outcome != sync.OutcomeFlagged || res.Plan != nil:
			t.Errorf("%s: %s %q, want flagged without a plan", table, res.Outcome, res.Reason)
		}
		switch {
		case orphan:
		case table == "root_link":
			if res.ErrorReason != sync.ReasonLocation || !strings.Contains(res.Reason, "symlink") {
				t.Errorf("%s: %s %q, want a location refusal naming the symlink", table, res.ErrorReason, res.Reason)
			}
		default:
			if res.ErrorReason != sync.ReasonLog || !strings.Contains(res.Reason, deltalog.ErrOutsideRoot.Error()) && !strings.Contains(res.Reason, "not a Delta table") {
				t.Errorf("%s: %s %q, want the log refused (symlink not followed)", table, res.ErrorReason, res.Reason)
			}
		}
		if v := e.catalogView(table); strings.Contains(v, secretMarker) {
			t.Errorf("%s: the catalog now holds the protected table's content", table)
		}
	}
}

// openBucketForTest opens a bucket URL's path as a writable bucket.
func openBucketForTest(ctx context.Context, raw string) (*blob.Bucket, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	prefix := strings.Trim(u.Path, "/") + "/"
	u.Path = ""
	b, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, err
	}
	return blob.PrefixedBucket(b, prefix), nil
}

// errorsTotal reads deltasync_errors_total{reason} from reg.
func errorsTotal(t *testing.T, reg *prometheus.Registry, reason sync.ErrorReason) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "deltasync_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == string(reason) {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
