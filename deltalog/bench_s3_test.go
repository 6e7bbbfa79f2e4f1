package deltalog

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Environment of the S3 benchmarks:
//
//	DELTASYNC_BENCH_S3_SERVER=process  gofakes3 runs in a child process (this
//	    test binary re-executed as TestS3BenchServer), so its CPU, heap and
//	    GC are not counted in the Load's cpu-ms/op and B/op; the child's CPU
//	    per Load is reported as server-cpu-ms/op. Default: in-process.
//	DELTASYNC_BENCH_S3_LATENCY=20ms    the server delays every GET, HEAD and
//	    LIST by this much, as a real S3 GET's first byte takes 10-50 ms.
const (
	s3BenchServerEnv  = "DELTASYNC_BENCH_S3_SERVER"
	s3BenchLatencyEnv = "DELTASYNC_BENCH_S3_LATENCY"
	s3BenchServeEnv   = "DELTASYNC_BENCH_S3_SERVE" // set in the child
)

// BenchmarkLoadS3 measures Load of the 10k-file fixture through s3blob
// against gofakes3 on loopback: the same work as BenchmarkLoad plus one
// HTTP round trip per request, which shows what the request count costs
// (a real S3 GET is 10-30 ms, so multiply gets/op accordingly).
func BenchmarkLoadS3(b *testing.B) {
	if !s3Enabled {
		b.Skip("built with tag nos3")
	}
	ctx := context.Background()
	dir := fixtureDir(b, 10_000)
	tbl, serverCPU := openS3BenchTable(b, dir)
	if snap, err := tbl.Load(ctx, LoadOptions{}); err != nil || snap.Version != fixtureLatest {
		b.Fatalf("Load = %v, %v; want version %d", snap, err, fixtureLatest)
	}
	timeS3Loads(b, ctx, tbl, serverCPU)
}

// timeS3Loads is timeLoads plus the server process's CPU per Load when the
// server runs in its own process.
func timeS3Loads(b *testing.B, ctx context.Context, tbl *Table, serverCPU func() time.Duration) {
	cpu0 := serverCPU()
	n := timeLoads(b, ctx, tbl)
	if cpu0 >= 0 {
		b.ReportMetric(float64(serverCPU()-cpu0)/float64(n)/1e6, "server-cpu-ms/op")
	}
}

// s3BenchLatency wraps h to delay reads by $DELTASYNC_BENCH_S3_LATENCY.
func s3BenchLatency(tb testing.TB, h http.Handler) http.Handler {
	v := os.Getenv(s3BenchLatencyEnv)
	if v == "" {
		return h
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		tb.Fatalf("%s: %v", s3BenchLatencyEnv, err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			time.Sleep(d)
		}
		h.ServeHTTP(w, r)
	})
}

// newS3BenchServer starts gofakes3 with a bucket "lake" and returns its URL
// and a function giving the server's CPU time so far (negative when it
// shares this process). The server is closed when tb ends.
func newS3BenchServer(tb testing.TB) (string, func() time.Duration) {
	tb.Helper()
	if os.Getenv(s3BenchServerEnv) != "process" {
		backend := s3mem.New()
		if err := backend.CreateBucket("lake"); err != nil {
			tb.Fatal(err)
		}
		srv := httptest.NewServer(s3BenchLatency(tb, gofakes3.New(backend).Server()))
		tb.Cleanup(srv.Close)
		return srv.URL, func() time.Duration { return -1 }
	}
	child := exec.Command(os.Args[0], "-test.run=^TestS3BenchServer$", "-test.timeout=0")
	child.Env = append(os.Environ(), s3BenchServeEnv+"=1")
	stdin, err := child.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = stdin.Close(); _ = child.Wait() })
	sc := bufio.NewScanner(stdout)
	u := ""
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "GOFAKES3_URL="); ok {
			u = v
			break
		}
	}
	if u == "" {
		tb.Fatalf("gofakes3 process ended without serving: %v", sc.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	pid := child.Process.Pid
	return u, func() time.Duration { return linuxProcessCPU(pid) }
}

// linuxProcessCPU reads a process's user+system CPU time from
// /proc/<pid>/stat (in USER_HZ ticks, 100 per second); 0 without /proc.
func linuxProcessCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at state.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100)
}

// TestS3BenchServer is the gofakes3 process of the S3 benchmarks with
// DELTASYNC_BENCH_S3_SERVER=process; it does nothing unless started by
// them. It prints its URL and serves until its stdin is closed.
func TestS3BenchServer(t *testing.T) {
	if os.Getenv(s3BenchServeEnv) == "" {
		t.Skip("run by the S3 benchmarks with " + s3BenchServerEnv + "=process")
	}
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s3BenchLatency(t, gofakes3.New(backend).Server()))
	defer srv.Close()
	fmt.Printf("GOFAKES3_URL=%s\n", srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// openS3BenchTable copies the _delta_log of the local table at dir into a
// gofakes3 bucket on loopback (newS3BenchServer) and opens it through
// s3blob. The server and the table are closed when b ends; serverCPU is
// newS3BenchServer's.
func openS3BenchTable(b *testing.B, dir string) (tbl *Table, serverCPU func() time.Duration) {
	b.Helper()
	srvURL, serverCPU := newS3BenchServer(b)
	return seedS3BenchTable(b, srvURL, dir), serverCPU
}

// s3BenchCreds are the credentials the S3 benchmarks sign with.
var s3BenchCreds = Credentials{S3AccessKeyID: "AKIDEXAMPLE", S3SecretAccessKey: "secret"}

// s3BenchURL is the table URL of the S3 benchmarks on the server at srvURL.
func s3BenchURL(srvURL string) string {
	return "s3://lake/t?endpoint=" + url.QueryEscape(srvURL) + "&region=us-east-1&use_path_style=true&disable_https=true"
}

// seedS3BenchTable copies the _delta_log of the local table at dir into
// the bucket "lake" of the gofakes3 server at srvURL and opens it.
func seedS3BenchTable(b *testing.B, srvURL, dir string) *Table {
	b.Helper()
	ctx := context.Background()
	creds := s3BenchCreds
	u := s3BenchURL(srvURL)
	seed, _, err := openBucket(ctx, u, creds)
	if err != nil {
		b.Fatal(err)
	}
	defer seed.Close()
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "_delta_log", e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := seed.WriteAll(ctx, logDir+e.Name(), data, nil); err != nil {
			b.Fatal(err)
		}
	}
	tbl, err := Open(ctx, u, WithCredentials(creds))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tbl.Close() })
	return tbl
}
