package deltalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"

	"github.com/deltasync/deltasync/internal/fakes3"
	"github.com/deltasync/deltasync/internal/testenv"
)

// Throttling on every store, through a fault proxy in front of the real
// emulator of each (gofakes3, fake-gcs-server, Azurite): one bucket (an
// Azure container) answers with the store's throttling answer while
// another bucket of the same store, on the same client, is served.

// bucketProxy forwards to an emulator and counts, per bucket, the requests
// served; a bucket's fault, when set, answers instead of the emulator.
type bucketProxy struct {
	srv      *httptest.Server
	bucketOf func(*http.Request) string

	mu      stdsync.Mutex
	served  map[string]int
	faulted map[string]int
	fault   map[string]func(w http.ResponseWriter) bool // true: answered
}

func newBucketProxy(t *testing.T, next http.Handler, bucketOf func(*http.Request) string) *bucketProxy {
	t.Helper()
	p := &bucketProxy{bucketOf: bucketOf, served: map[string]int{}, faulted: map[string]int{},
		fault: map[string]func(http.ResponseWriter) bool{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := p.bucketOf(r)
		p.mu.Lock()
		p.served[b]++
		answered := false
		if f := p.fault[b]; f != nil {
			if answered = f(w); answered {
				p.faulted[b]++
			}
		}
		p.mu.Unlock()
		if !answered {
			next.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *bucketProxy) setFault(bucket string, f func(http.ResponseWriter) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault[bucket] = f
}

// counts returns what bucket was served and faulted since the last reset.
func (p *bucketProxy) counts(bucket string) (served, faulted int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.served[bucket], p.faulted[bucket]
}

func (p *bucketProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.served, p.faulted = map[string]int{}, map[string]int{}
}

// throttleStore is one store under the proxy.
type throttleStore struct {
	proxy *bucketProxy
	seed  func(t *testing.T, bucket string, n int)
	url   func(bucket string, i int) string // table i of bucket
	creds func(bucket string) Credentials
	// throttle writes the store's throttling answer; the n-th of a burst
	// (stores with more than one kind alternate them).
	throttle func(w http.ResponseWriter, n int, retryAfter string)
	// transient writes an answer the SDK retries itself (a 500).
	transient func(w http.ResponseWriter)
}

func (s *throttleStore) open(t *testing.T, bucket string, n int, g *StorageGates) []*Table {
	t.Helper()
	var tbls []*Table
	for i := range n {
		tbl, err := Open(context.Background(), s.url(bucket, i), WithStorageGates(g), WithCredentials(s.creds(bucket)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tbl.Close() })
		tbls = append(tbls, tbl)
	}
	return tbls
}

// loadAllCtx loads every table at once under ctx; errors by table.
func loadAllCtx(ctx context.Context, tbls []*Table) []error {
	errs := make([]error, len(tbls))
	var wg stdsync.WaitGroup
	for i, tbl := range tbls {
		wg.Go(func() {
			snap, err := tbl.Load(ctx, LoadOptions{})
			if err == nil && snap.Version != 14 {
				err = fmt.Errorf("version %d, want 14", snap.Version)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errs
}

// notBefore returns the time before which the gate sends nothing.
func (g *bucketGate) notBeforeTime() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.notBefore
}

// testThrottledBucketBacksOffAlone runs the scenario on s:
//
//  1. hold: the hot bucket throttles with Retry-After 600 s; while its
//     tables wait out that backoff, the cold bucket's tables load with
//     exactly the requests of a run without faults, and none waits;
//  2. burst: the hot bucket throttles its next 40 requests; its tables
//     ride the burst out under the shared backoff (a Load that meets more
//     of it than throttleRetries fails as ErrThrottled), every throttling
//     answer reached the gate (the SDK retried none on its own), and a
//     transient 500 on the cold bucket is still retried by the SDK;
//  3. forever: the hot bucket throttles every request; a Load fails, in
//     at most throttleRetries+1 requests, with ErrThrottled and an error
//     naming the table and the throttling.
func testThrottledBucketBacksOffAlone(t *testing.T, s *throttleStore) {
	defer func(b, m time.Duration) { throttleBase, throttleMax = b, m }(throttleBase, throttleMax)
	const n = 4
	s.seed(t, "hot", n)
	s.seed(t, "cold", n)

	// The run without faults: what a round of cold Loads costs.
	g0 := newGates(t, StorageLimits{})
	s.proxy.reset()
	for i, err := range loadAllCtx(context.Background(), append(s.open(t, "hot", n, g0), s.open(t, "cold", n, g0)...)) {
		if err != nil {
			t.Fatalf("table %d without faults: %v", i, err)
		}
	}
	perRound, _ := s.proxy.counts("cold")
	if hot, _ := s.proxy.counts("hot"); hot != perRound {
		t.Fatalf("without faults the buckets' Loads cost %d and %d requests; the buckets hold the same tables", hot, perRound)
	}
	hotKey, coldKey := gateKey(s.url("hot", 0)), gateKey(s.url("cold", 0))
	if hotKey == coldKey {
		t.Fatalf("hot and cold buckets share the gate %q", hotKey)
	}

	t.Run("hold", func(t *testing.T) {
		throttleBase, throttleMax = time.Millisecond, 20*time.Minute
		g := newGates(t, StorageLimits{})
		hot, cold := s.open(t, "hot", n, g), s.open(t, "cold", n, g)
		s.proxy.reset()
		var k int
		s.proxy.setFault("hot", func(w http.ResponseWriter) bool { s.throttle(w, k, "600"); k++; return true })
		defer s.proxy.setFault("hot", nil)
		ctx, cancel := context.WithCancel(context.Background())
		hotDone := make(chan []error)
		go func() { hotDone <- loadAllCtx(ctx, hot) }()
		hg, cg := g.gate(hotKey), g.gate(coldKey)
		for deadline := time.Now().Add(time.Minute); hg.throttledCount() == 0; {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("the hot bucket's gate saw no throttling in a minute (%v)", <-hotDone)
			}
			time.Sleep(time.Millisecond)
		}
		held := hg.notBeforeTime()
		for i, err := range loadAllCtx(context.Background(), cold) {
			if err != nil {
				t.Errorf("cold table %d while the hot bucket is held: %v", i, err)
			}
		}
		coldDone := time.Now()
		cancel()
		for i, err := range <-hotDone {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("hot table %d: %v, want it still waiting out the backoff when cancelled", i, err)
			}
		}
		if !coldDone.Before(held) {
			t.Errorf("the hot bucket's backoff (to %v) ended before the cold Loads did (%v): the test shows nothing", held, coldDone)
		}
		if served, _ := s.proxy.counts("cold"); served != perRound {
			t.Errorf("cold bucket served %d requests while the hot one was held, want %d as without faults", served, perRound)
		}
		if c := cg.throttledCount(); c != 0 || !cg.notBeforeTime().IsZero() {
			t.Errorf("cold bucket's gate: %d throttled answers, held until %v; want none", c, cg.notBeforeTime())
		}
		// Each hot Load sent one request, answered throttled, and waited:
		// the SDK retried none of them on its own.
		served, faulted := s.proxy.counts("hot")
		if int64(faulted) != hg.throttledCount() || served != faulted || faulted > n {
			t.Errorf("hot bucket: %d requests, %d throttled, the gate saw %d; want one per Load (at most %d), each seen by the gate",
				served, faulted, hg.throttledCount(), n)
		}
		if d := time.Until(held); d < 5*time.Minute {
			t.Errorf("hot bucket held for %v more, want the answer's Retry-After (600 s, capped at throttleMax)", d)
		}
	})

	t.Run("burst", func(t *testing.T) {
		throttleBase, throttleMax = time.Millisecond, 4*time.Millisecond
		g := newGates(t, StorageLimits{})
		hot, cold := s.open(t, "hot", n, g), s.open(t, "cold", n, g)
		s.proxy.reset()
		burst, k := 40, 0
		s.proxy.setFault("hot", func(w http.ResponseWriter) bool {
			if burst == 0 {
				return false
			}
			burst--
			s.throttle(w, k, "")
			k++
			return true
		})
		defer s.proxy.setFault("hot", nil)
		var hotErrs int
		for round := 0; ; round++ {
			if _, f := s.proxy.counts("hot"); f == 40 {
				break
			}
			if round > 100 {
				t.Fatalf("burst not over after %d rounds", round)
			}
			for _, err := range loadAllCtx(context.Background(), hot) {
				if err == nil {
					continue
				}
				if !errors.Is(err, ErrThrottled) {
					t.Errorf("hot Load failed with %v, want ErrThrottled (or success)", err)
				}
				hotErrs++
			}
		}
		t.Logf("%d hot Loads failed as throttled during the burst", hotErrs)
		if c := g.gate(hotKey).throttledCount(); c != 40 {
			t.Errorf("the hot bucket's gate saw %d throttled answers of the 40 sent: the SDK retried the others on its own", c)
		}
		transient := 1
		s.proxy.setFault("cold", func(w http.ResponseWriter) bool {
			if transient == 0 {
				return false
			}
			transient--
			s.transient(w)
			return true
		})
		defer s.proxy.setFault("cold", nil)
		for i, err := range loadAllCtx(context.Background(), cold) {
			if err != nil {
				t.Errorf("cold table %d: %v (a transient 500 is the SDK's to retry)", i, err)
			}
		}
		if served, _ := s.proxy.counts("cold"); served != perRound+1 {
			t.Errorf("cold bucket served %d requests, want %d (a round, and the transient 500's retry)", served, perRound+1)
		}
		if c := g.gate(coldKey).throttledCount(); c != 0 {
			t.Errorf("cold bucket's gate saw %d throttled answers, want 0", c)
		}
		for i, err := range loadAllCtx(context.Background(), hot) {
			if err != nil {
				t.Errorf("hot table %d after the burst: %v", i, err)
			}
		}
	})

	t.Run("forever", func(t *testing.T) {
		throttleBase, throttleMax = time.Millisecond, 2*time.Millisecond
		g := newGates(t, StorageLimits{})
		tbl := s.open(t, "hot", 1, g)[0]
		s.proxy.reset()
		var k int
		s.proxy.setFault("hot", func(w http.ResponseWriter) bool { s.throttle(w, k, ""); k++; return true })
		defer s.proxy.setFault("hot", nil)
		_, err := tbl.Load(context.Background(), LoadOptions{})
		if !errors.Is(err, ErrThrottled) {
			t.Fatalf("Load of a bucket that throttles every request: %v, want ErrThrottled", err)
		}
		msg := err.Error()
		t.Logf("error: %s", msg)
		for _, want := range []string{"t0", "storage throttled the bucket", strconv.Itoa(throttleRetries+1) + " attempts"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not name %q", msg, want)
			}
		}
		if served, _ := s.proxy.counts("hot"); served != throttleRetries+1 {
			t.Errorf("%d requests to the throttling bucket, want %d (the first GET and the gate's retries, none of the SDK's)", served, throttleRetries+1)
		}
	})
}

// TestThrottledBucketBacksOffAloneS3: 503 SlowDown on gofakes3.
func TestThrottledBucketBacksOffAloneS3(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	ambientS3(t)
	backend := fakes3.NewIndexed()
	for _, b := range []string{"hot", "cold"} {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	p := newBucketProxy(t, gofakes3.New(backend).Server(), func(r *http.Request) string {
		b, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		return b
	})
	params := "?endpoint=" + url.QueryEscape(p.srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
	testThrottledBucketBacksOffAlone(t, &throttleStore{
		proxy: p,
		seed: func(t *testing.T, bucket string, n int) {
			seedCheckpointCopies(t, n, func(key string, data []byte) error {
				_, err := backend.PutObject(bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil)
				return err
			})
		},
		url:   func(bucket string, i int) string { return fmt.Sprintf("s3://%s/t%d%s", bucket, i, params) },
		creds: func(string) Credentials { return Credentials{} },
		throttle: func(w http.ResponseWriter, _ int, retryAfter string) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			slowDown(w)
		},
		transient: func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
		},
	})
}

// TestThrottledBucketBacksOffAloneGCS: 429 rateLimitExceeded and 503 on
// fake-gcs-server. Before, the GCS client retried both on its own, per
// request, with no bound on attempts: the gate saw none of them.
func TestThrottledBucketBacksOffAloneGCS(t *testing.T) {
	if !gcsEnabled {
		t.Skip("built with tag nogcs")
	}
	port := testenv.FreePort(t)
	host := "127.0.0.1:" + strconv.Itoa(int(port))
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Port: port, PublicHost: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	for _, b := range []string{"hot", "cold"} {
		srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
	}
	target, _ := url.Parse("http://" + host)
	p := newBucketProxy(t, hostProxy(target), func(r *http.Request) string {
		// JSON API: /storage/v1/b/BUCKET/o..., /download/storage/v1/b/BUCKET/...;
		// XML API reads: /BUCKET/OBJECT.
		path := r.URL.Path
		if _, rest, ok := strings.Cut(path, "/storage/v1/b/"); ok {
			path = rest
		}
		b, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		return b
	})
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(p.srv.URL, "http://"))
	testThrottledBucketBacksOffAlone(t, &throttleStore{
		proxy: p,
		seed: func(t *testing.T, bucket string, n int) {
			seedCheckpointCopies(t, n, func(key string, data []byte) error {
				srv.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: key}, Content: data})
				return nil
			})
		},
		url:   func(bucket string, i int) string { return fmt.Sprintf("gs://%s/t%d", bucket, i) },
		creds: func(string) Credentials { return Credentials{GCSOAuthToken: "ya29.test-token"} },
		throttle: func(w http.ResponseWriter, k int, retryAfter string) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			if k%2 == 0 {
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"error":{"code":429,"message":"The bucket exceeded its request rate.","errors":[{"message":"The bucket exceeded its request rate.","domain":"usageLimits","reason":"rateLimitExceeded"}]}}`)
				return
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":{"code":503,"message":"Backend Error","errors":[{"message":"Backend Error","domain":"global","reason":"backendError"}]}}`)
		},
		transient: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":{"code":500,"message":"Internal Error","errors":[{"message":"Internal Error","domain":"global","reason":"internalError"}]}}`)
		},
	})
}

// TestThrottledBucketBacksOffAloneAzure: 503 ServerBusy and 500
// OperationTimedOut on Azurite, two containers of one account. Before,
// the SDK retried each 503 three times per request, with its own delays.
func TestThrottledBucketBacksOffAloneAzure(t *testing.T) {
	if !azureEnabled {
		t.Skip("built with tag noazure")
	}
	hot, cold := newAzuriteContainer(t, "hot"), newAzuriteContainer(t, "cold")
	byName := map[string]azuriteContainer{"hot": hot, "cold": cold}
	target, _ := url.Parse(hot.svcURL)
	target.Path = ""
	p := newBucketProxy(t, hostProxy(target), func(r *http.Request) string {
		// /ACCOUNT/CONTAINER/blob (Azurite's path-style URLs).
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
		if len(parts) < 2 {
			return ""
		}
		for name, c := range byName {
			if parts[1] == c.name {
				return name
			}
		}
		return parts[1]
	})
	query := "?protocol=http&localemu=true&storage_account=" + hot.account + "&domain=" + strings.TrimPrefix(p.srv.URL, "http://")
	testThrottledBucketBacksOffAlone(t, &throttleStore{
		proxy: p,
		seed: func(t *testing.T, bucket string, n int) {
			c := byName[bucket]
			seedCheckpointCopies(t, n, func(key string, data []byte) error {
				_, err := c.client.UploadBuffer(context.Background(), c.name, key, bytes.Clone(data), nil)
				return err
			})
		},
		url: func(bucket string, i int) string {
			return fmt.Sprintf("azblob://%s/t%d%s", byName[bucket].name, i, query)
		},
		creds: func(bucket string) Credentials {
			c := byName[bucket]
			qp, err := sas.BlobSignatureValues{
				Protocol: sas.ProtocolHTTPSandHTTP, StartTime: time.Now().Add(-time.Hour).UTC(), ExpiryTime: time.Now().Add(2 * time.Hour).UTC(),
				Permissions: to.Ptr(sas.ContainerPermissions{Read: true, List: true}).String(), ContainerName: c.name,
			}.SignWithSharedKey(c.cred)
			if err != nil {
				t.Fatal(err)
			}
			return Credentials{AzureSASToken: qp.Encode()}
		},
		throttle: func(w http.ResponseWriter, k int, retryAfter string) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.Header().Set("Content-Type", "application/xml")
			if k%2 == 0 {
				w.Header().Set("x-ms-error-code", "ServerBusy")
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprint(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>Operations per second is over the account limit.</Message></Error>`)
				return
			}
			w.Header().Set("x-ms-error-code", "OperationTimedOut")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>OperationTimedOut</Code><Message>Operation could not be completed within the specified time.</Message></Error>`)
		},
		transient: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/xml")
			w.Header().Set("x-ms-error-code", "InternalError")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>InternalError</Code><Message>The server encountered an internal error.</Message></Error>`)
		},
	})
}

// TestS3ClientHasNoSharedRetryQuota: the retryer of the S3 client every
// table of a fleet shares has no retry quota. The SDK's standard retryer
// takes 5 of 500 tokens per retry from one quota per client, so a burst
// of retried errors on any bucket (100 retries) made every request of
// every bucket on that client fail fast until the quota refilled.
func TestS3ClientHasNoSharedRetryQuota(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	ambientS3(t)
	s := newBucketsServer(t, "a")
	tbl, err := Open(context.Background(), "s3://a/t0"+s.params, WithStorageGates(newGates(t, StorageLimits{})))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	var c *s3.Client
	if !tbl.bucket.As(&c) {
		t.Fatal("s3 table exposes no *s3.Client")
	}
	retryable := &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 500}},
		Err: errors.New("InternalError")}
	tokens := func(r aws.RetryerV2) int {
		for i := range 1000 {
			if _, err := r.GetRetryToken(context.Background(), retryable); err != nil {
				return i
			}
		}
		return 1000
	}
	// The check can fail: the SDK's default retryer runs out at 100.
	if n := tokens(retry.NewStandard()); n >= 1000 {
		t.Fatalf("the SDK's standard retryer gave %d retry tokens; the check shows nothing", n)
	}
	r, ok := c.Options().Retryer.(aws.RetryerV2)
	if !ok {
		t.Fatalf("client retryer %T is not an aws.RetryerV2", c.Options().Retryer)
	}
	if n := tokens(r); n < 1000 {
		t.Errorf("the shared S3 client's retryer ran out of retry tokens after %d retries: a quota shared by every bucket", n)
	}
	if r.IsErrorRetryable(retryable) != true {
		t.Error("the shared S3 client does not retry a 500: only throttling is left to the bucket's gate")
	}
}
