package deltalog

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"
)

// BenchmarkS3RequestFloor measures what the requests of one Load cost
// with nothing of deltalog around them: the requests a Load of each
// layout table sends to gofakes3 (recorded at the server during one
// Load) are sent again, the first two (the _last_checkpoint GET and the
// LIST) one after the other and the rest by prefetchMax workers, with
// every body read and dropped. Two clients:
//
//	sdk:  the Table's own client (gocloud's s3blob over the AWS SDK,
//	      signed, with the options openS3 sets);
//	http: net/http alone, unsigned (gofakes3 does not check signatures),
//	      on a transport with as many idle connections.
//
// Set against BenchmarkLoadLayouts (local) and BenchmarkLoadLayoutsS3,
// it says how much of an S3 Load is the requests themselves (client and
// server, same process, same cores), and so how far below that any
// change to deltalog could bring it.
//
//	go test ./deltalog -run '^$' -bench 'BenchmarkS3RequestFloor|BenchmarkLoadLayouts(S3)?/pgo-1M$' -benchmem -count 3
func BenchmarkS3RequestFloor(b *testing.B) {
	if !s3Enabled {
		b.Skip("built with tag nos3")
	}
	ctx := context.Background()
	for _, tc := range layoutBenchTables(b) {
		b.Run(tc[0], func(b *testing.B) {
			var (
				recording atomic.Bool
				mu        sync.Mutex
				reqs      []recordedRequest
			)
			backend := s3mem.New()
			if err := backend.CreateBucket("lake"); err != nil {
				b.Fatal(err)
			}
			fake := gofakes3.New(backend).Server()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if recording.Load() {
					mu.Lock()
					reqs = append(reqs, recordRequest(r))
					mu.Unlock()
				}
				fake.ServeHTTP(w, r)
			}))
			b.Cleanup(srv.Close)
			tbl := seedS3BenchTable(b, srv.URL, tc[1])
			recording.Store(true)
			if _, err := tbl.Load(ctx, LoadOptions{}); err != nil {
				b.Fatal(err)
			}
			recording.Store(false)
			if len(reqs) < 3 {
				b.Fatalf("a Load sent %d requests: %v", len(reqs), reqs)
			}

			bucket, _, err := openBucket(ctx, s3BenchURL(srv.URL), s3BenchCreds)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = bucket.Close() })
			tr := http.DefaultTransport.(*http.Transport).Clone()
			keepFetchConns(tr)
			hc := &http.Client{Transport: tr}
			b.Cleanup(tr.CloseIdleConnections)
			b.Run("sdk", func(b *testing.B) {
				send := func(ctx context.Context, r recordedRequest) error { return r.viaBucket(ctx, bucket) }
				timeRequestFloor(b, ctx, reqs, send)
			})
			var client *s3.Client
			if !bucket.As(&client) {
				b.Fatal("the bucket is not an s3blob bucket")
			}
			b.Run("presigned", func(b *testing.B) {
				send := func(ctx context.Context, r recordedRequest) error { return r.viaPresigned(ctx, client, hc) }
				timeRequestFloor(b, ctx, reqs, send)
			})
			b.Run("http", func(b *testing.B) {
				send := func(ctx context.Context, r recordedRequest) error { return r.viaHTTP(ctx, hc, srv.URL) }
				timeRequestFloor(b, ctx, reqs, send)
			})
		})
	}
}

// recordedRequest is one request a Load sent, as the server saw it.
type recordedRequest struct {
	uri string // path and query, path-style: /lake/t/_delta_log/...
	rng string // Range header, "" for a whole object
	// key is the object a GET reads, in the bucket ("t/_delta_log/...");
	// "" for a LIST, whose start-after (in the bucket too) is startAfter.
	key, startAfter string
}

// recordRequest records r, a GET or a ListObjectsV2 of the bucket "lake".
func recordRequest(r *http.Request) recordedRequest {
	rec := recordedRequest{uri: r.URL.RequestURI(), rng: r.Header.Get("Range")}
	if q := r.URL.Query(); q.Get("list-type") == "2" {
		rec.startAfter = q.Get("start-after")
	} else {
		rec.key = strings.TrimPrefix(r.URL.Path, "/lake/")
	}
	return rec
}

// viaHTTP sends r with net/http alone and drains the body.
func (r recordedRequest) viaHTTP(ctx context.Context, hc *http.Client, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+r.uri, nil)
	if err != nil {
		return err
	}
	if r.rng != "" {
		req.Header.Set("Range", r.rng)
	}
	return r.send(hc, req)
}

// send sends req (r as built by a client) and drains the response body.
func (r recordedRequest) send(hc *http.Client, req *http.Request) error {
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", r.uri, resp.Status)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// viaPresigned signs r's GET with the SDK's presigner (its serialize and
// sign steps, no transport) and sends it with net/http; a LIST goes
// through the client as a ListObjectsV2 call.
func (r recordedRequest) viaPresigned(ctx context.Context, client *s3.Client, hc *http.Client) error {
	if r.key == "" {
		in := &s3.ListObjectsV2Input{Bucket: aws.String("lake"), Prefix: aws.String("t/" + logDir)}
		if r.startAfter != "" {
			in.StartAfter = aws.String(r.startAfter)
		}
		_, err := client.ListObjectsV2(ctx, in)
		return err
	}
	in := &s3.GetObjectInput{Bucket: aws.String("lake"), Key: aws.String(r.key)}
	if r.rng != "" {
		in.Range = aws.String(r.rng)
	}
	signed, err := s3.NewPresignClient(client).PresignGetObject(ctx, in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, signed.Method, signed.URL, nil)
	if err != nil {
		return err
	}
	req.Header = signed.SignedHeader
	return r.send(hc, req)
}

// viaBucket sends r through the gocloud bucket of the table URL (keys
// relative to the table) with the helpers a Load uses: listLogPages for
// the LIST, readFileInto for a whole-object GET; a ranged GET is a range
// reader, drained.
func (r recordedRequest) viaBucket(ctx context.Context, bucket *blob.Bucket) error {
	if r.key == "" {
		_, err := listLogPages(ctx, nil, bucket, "", strings.TrimPrefix(r.startAfter, "t/"), nil)
		return err
	}
	key := strings.TrimPrefix(r.key, "t/")
	if r.rng == "" {
		data, err := readFileInto(ctx, bucket, key, nil)
		putBuf(data)
		return err
	}
	a, z, ok := strings.Cut(strings.TrimPrefix(r.rng, "bytes="), "-")
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(z, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("%s: range %q", key, r.rng)
	}
	rd, err := bucket.NewRangeReader(ctx, key, first, last-first+1, nil)
	if err != nil {
		return err
	}
	defer rd.Close()
	_, err = io.Copy(io.Discard, rd)
	return err
}

// timeRequestFloor sends reqs once per iteration: the first two in order,
// the rest by prefetchMax workers.
func timeRequestFloor(b *testing.B, ctx context.Context, reqs []recordedRequest, send func(context.Context, recordedRequest) error) {
	b.ReportAllocs()
	cpu0 := processCPU()
	n := 0
	for b.Loop() {
		for _, r := range reqs[:2] {
			if err := send(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
		next := make(chan recordedRequest)
		errs := make(chan error, prefetchMax)
		var wg sync.WaitGroup
		for range min(prefetchMax, len(reqs)-2) {
			wg.Go(func() {
				for r := range next {
					if err := send(ctx, r); err != nil {
						select {
						case errs <- err:
						default:
						}
					}
				}
			})
		}
		for _, r := range reqs[2:] {
			next <- r
		}
		close(next)
		wg.Wait()
		select {
		case err := <-errs:
			b.Fatal(err)
		default:
		}
		n++
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(n)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(len(reqs)), "requests/op")
}
