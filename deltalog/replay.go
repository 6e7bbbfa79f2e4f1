package deltalog

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	stdsync "sync"
	"sync/atomic"
)

// replay accumulates protocol, metaData and domains while files are read
// newest first; the first action of each kind seen is the current one.
type replay struct {
	protocol    *Protocol
	rawProtocol json.RawMessage
	metadata    *Metadata
	rawMetadata json.RawMessage
	domains     map[string]string // live domains
	seen        map[string]bool   // domains decided (set or removed) by a newer file
	newest      *fileActions      // actions of the newest file read (commit info)
	newestFile  *logPath
	// protocolFile and metadataFile name where the actions were found
	// (for errors); "" when carried over from a previous snapshot.
	protocolFile, metadataFile string
	// schemaSum is set when metadata was carried over from a snapshot
	// holding only its schema's digest (Snapshot.Compact).
	schemaSum [sha256.Size]byte
	// budget bounds the bytes the replay holds at once (see budget); nil
	// is set to DefaultMaxLoadBytes by run.
	budget *budget
}

// wantDomains reports whether domainMetadata actions must still be
// collected: the protocol is unknown yet or has the domainMetadata feature.
func (r *replay) wantDomains() bool {
	return r.protocol == nil || r.protocol.hasWriterFeature("domainMetadata")
}

// done reports whether replay can stop: both actions found and no
// domains to collect.
func (r *replay) done() bool {
	return r.protocol != nil && r.metadata != nil && !r.protocol.hasWriterFeature("domainMetadata")
}

// apply folds the actions of one file, older than every file applied so far.
func (r *replay) apply(p *logPath, fa *fileActions) {
	if r.newest == nil {
		r.newest, r.newestFile = fa, p
	}
	if r.protocol == nil && fa.protocol != nil {
		r.protocol, r.rawProtocol, r.protocolFile = fa.protocol, fa.rawProtocol, p.Key
	}
	if r.metadata == nil && fa.metadata != nil {
		r.metadata, r.rawMetadata, r.metadataFile = fa.metadata, fa.rawMetadata, p.Key
	}
	// Within one file the last action for a domain wins.
	for i := len(fa.domains) - 1; i >= 0; i-- {
		d := fa.domains[i]
		if r.seen == nil {
			r.seen, r.domains = map[string]bool{}, map[string]string{}
		}
		if r.seen[d.Domain] {
			continue
		}
		r.seen[d.Domain] = true
		if !d.Removed {
			r.domains[d.Domain] = d.Configuration
		}
	}
}

// prefetchMax bounds how many GETs a Load has in flight. A real S3 GET
// takes 10-50 ms to its first byte, so round trips are what a Load of a
// table with many commits since its checkpoint costs: 32 reads 100 commits
// in 4 round trips (16: 7). With 20 ms injected per read,
// BenchmarkLoadLayoutsS3 on pgo-1M took ~140 ms at 32, ~205 ms at 16
// (BENCHMARKS.md, "Over S3").
const prefetchMax = 32

// prefetchBytes bounds what the commits fetched ahead of the one being
// applied hold (commitReadBytes of their listed sizes): a run of commits
// read whole (up to 1 MiB each) is fetched fewer at a time, always at
// least one; streamed commits hold their read buffer only.
const prefetchBytes = 16 << 20

// idleConnsPerHost is how many idle connections per host an object-store
// client keeps for reuse: the GETs in flight of a few concurrent Loads.
const idleConnsPerHost = 4 * prefetchMax

// run reads files (newest first) until done. A run of JSON files is
// fetched concurrently and applied in order (commits); Parquet
// checkpoints are read one at a time (a few block GETs).
//
// When a run of JSON files ends at a Parquet checkpoint, the replay will
// almost always need all of them and the checkpoint: a checkpoint holds
// the table's protocol, so stopping early means that a commit since the
// checkpoint wrote both protocol and metaData (a protocol upgrade or a
// replace). So there the window starts full instead of at 1, and the
// checkpoint's first file is read alongside the commits. On an object
// store that saves the round trip of the newest commit alone and those of
// the checkpoint's footer and chunk reads; in the rare early stop it
// wastes at most one window of commits and the checkpoint read. Without
// a checkpoint below (a log read from commit 0, or a refresh), the newest
// commit is read alone first: there it is more often the one that holds
// protocol and metaData (a table just created or replaced). If it does
// not, the rest of the run goes at the full window (see commits).
func (t *Table) run(ctx context.Context, r *replay, files []logPath) *LogError {
	if r.budget == nil {
		r.budget = newBudget(0)
	}
	for i := 0; i < len(files) && !r.done(); {
		if files[i].Parquet {
			p := &files[i]
			fa, err := t.readParquet(ctx, r, p, r.wantDomains())
			if err != nil {
				return err
			}
			r.apply(p, fa)
			i++
			continue
		}
		j := i + 1
		for j < len(files) && !files[j].Parquet {
			j++
		}
		if j == len(files) {
			return t.commits(ctx, r, files[i:j], 1, prefetchMax)
		}
		// The checkpoint read takes one of the prefetchMax GETs in flight.
		cp := &files[j]
		wantDomains := r.wantDomains()
		var fa *fileActions
		var cpErr *LogError
		cpDone := make(chan struct{})
		go func() {
			defer close(cpDone)
			fa, cpErr = t.readParquet(ctx, r, cp, wantDomains)
		}()
		err := t.commits(ctx, r, files[i:j], prefetchMax-1, prefetchMax-1)
		<-cpDone
		switch {
		case err != nil:
			return err
		case r.done():
			return nil
		case cpErr != nil && wantDomains != r.wantDomains():
			// A commit held a protocol without domainMetadata, and the
			// read with domains failed: read the checkpoint as the replay
			// would have, without them (its domains are dropped anyway).
			i = j
			continue
		case cpErr != nil:
			return cpErr
		}
		r.apply(cp, fa)
		i = j + 1
	}
	return nil
}

// fetchJob asks a fetch worker to GET files[i] into buf.
type fetchJob struct {
	i   int
	buf []byte
}

// fetched is the result of one GET, parsed.
type fetched struct {
	i    int
	fa   *fileActions
	data []byte // the buffer read into, for reuse; nil when streamed
	err  *LogError
}

// commits fetches JSON files concurrently and applies them in order until
// done. The number of files fetched ahead of the one being applied (the
// window) starts at window and is maxWindow once the first file has been
// applied, with what they hold under prefetchBytes; the window slides: a GET
// starts as soon as a slot frees instead of when the slowest GET of a
// window ends. From a window of 1 the newest file is read alone, so a
// replay that stops there (protocol and metaData in the newest commit)
// reads nothing else; one that does not stop there needs every file down
// to the next protocol and metaData, which is nearly always all of them
// (a protocol is written by the first commit, a checkpoint or an
// upgrade), so the rest goes at the full window: 1 + ⌈(n-1)/maxWindow⌉
// round trips for n files (TestLoadRoundTrips). A replay that stops early
// has wasted at most the rest of the window. GETs run on at most
// maxWindow worker goroutines that each do many: a fresh goroutine per GET
// grew its stack through the SDK's deep middleware chain every time (~10%
// of the CPU of a Load over S3). Each worker parses what it fetched
// (readCommit: a big commit as it streams), so a file's bytes are held
// only while it is parsed. Errors are reported in order of application,
// naming the file.
func (t *Table) commits(ctx context.Context, r *replay, files []logPath, window, maxWindow int) *LogError {
	ctx, cancel := context.WithCancel(ctx)
	var wg stdsync.WaitGroup
	var stop atomic.Bool
	jobs := make(chan fetchJob, maxWindow)
	// Never more results outstanding than GETs started and not applied
	// (at most maxWindow): workers never block on send.
	results := make(chan fetched, maxWindow)
	// On return, GETs already sent are cancelled (a streamed commit stops
	// being read) and queued ones are dropped.
	got := make([]fetched, len(files))
	arrived := make([]bool, len(files))
	// free holds the buffers of commits already parsed, for later GETs:
	// nothing parsed keeps a reference into a file's bytes.
	var free [][]byte
	defer func() {
		stop.Store(true)
		cancel()
		close(jobs)
		wg.Wait()
		// Every buffer of this replay goes back to the pool: those parsed,
		// those fetched and not applied, and those still in results.
		close(results)
		for res := range results {
			putBuf(res.data)
		}
		for _, g := range got {
			putBuf(g.data)
		}
		for _, b := range free {
			putBuf(b)
		}
	}()
	// Only the newest file's commitInfo is used (its timestamp).
	wantInfo := r.newest == nil
	workers, next := 0, 0
	var ahead int64 // what files[i:next] hold (commitReadBytes)
	for i := range files {
		if r.done() {
			return nil
		}
		for ; next < len(files) && next-i < window; next++ {
			size := commitReadBytes(files[next].Size)
			if next > i && ahead+size > prefetchBytes {
				break
			}
			ahead += size
			job := fetchJob{i: next}
			if k := len(free); k > 0 {
				job.buf, free = free[k-1], free[:k-1]
			}
			if workers < window {
				workers++
				wg.Add(1)
				go func() {
					defer wg.Done()
					for job := range jobs {
						if stop.Load() {
							putBuf(job.buf)
							continue
						}
						fa, data, err := t.readCommit(ctx, &files[job.i], job.buf, wantInfo && job.i == 0, r.budget)
						results <- fetched{i: job.i, fa: fa, data: data, err: err}
					}
				}()
			}
			jobs <- job
		}
		for !arrived[i] {
			res := <-results
			got[res.i], arrived[res.i] = res, true
		}
		ahead -= commitReadBytes(files[i].Size)
		if got[i].err != nil {
			return got[i].err
		}
		free = append(free, got[i].data)
		r.apply(&files[i], got[i].fa)
		got[i] = fetched{}
		window = maxWindow
	}
	return nil
}

// readParquet reads the projected actions of a Parquet checkpoint.
func (t *Table) readParquet(ctx context.Context, r *replay, p *logPath, wantDomains bool) (*fileActions, *LogError) {
	ra, size, err := t.readerAt(ctx, p.Key, p.Size)
	if err != nil {
		return nil, fileErr(p.Version, p.Key, 0, err)
	}
	br := newBlockReaderAt(ra, size, checkpointBlock(size))
	br.budget = r.budget
	fa, err := readCheckpoint(br, size, wantDomains, r.budget)
	br.release() // what readParquetActions returns holds copies
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			// The Load was cancelled under parquet-go (a block's GET, a
			// wait for the memory pool), which may have worded the
			// context's error into one of its own: not a corrupt file.
			err = fmt.Errorf("%w (%v)", cerr, err)
		}
		return nil, fileErr(p.Version, p.Key, 0, err)
	}
	return fa, nil
}

// TimestampSource says where a snapshot's CommitTimestamp came from. The
// zero value is a file's modification time: what a store lists of a file
// is not the log's content (a copied or restored log has fresh ones), so
// only the other sources are evidence of when a commit was made.
type TimestampSource uint8

const (
	// TimestampModTime is the newest file's modification time, as the
	// store lists it (its commit has neither an in-commit timestamp nor
	// a commitInfo.timestamp, or the latest version is a checkpoint
	// whose commit is gone).
	TimestampModTime TimestampSource = iota
	// TimestampCommitInfo is the newest commit's commitInfo.timestamp.
	TimestampCommitInfo
	// TimestampInCommit is the newest commit's commitInfo.inCommitTimestamp,
	// delta.enableInCommitTimestamps being true.
	TimestampInCommit
)

// FromContent reports whether the timestamp was written in the log itself
// (an in-commit timestamp or commitInfo.timestamp).
func (s TimestampSource) FromContent() bool {
	return s == TimestampCommitInfo || s == TimestampInCommit
}

// String names the source as the Delta protocol does.
func (s TimestampSource) String() string {
	switch s {
	case TimestampCommitInfo:
		return "commitInfo.timestamp"
	case TimestampInCommit:
		return "commitInfo.inCommitTimestamp"
	default:
		return "the file's modification time"
	}
}

// commitTimestamp picks the timestamp of the newest file read and says
// where it came from: the in-commit timestamp when ict is enabled and
// present, else commitInfo.timestamp, else the file's modification time.
func commitTimestamp(r *replay, md *Metadata) (int64, TimestampSource) {
	fa, p := r.newest, r.newestFile
	if fa == nil || p == nil {
		return 0, TimestampModTime
	}
	if fa.ict != nil && md != nil && md.Configuration["delta.enableInCommitTimestamps"] == "true" {
		return *fa.ict, TimestampInCommit
	}
	if fa.timestamp != nil {
		return *fa.timestamp, TimestampCommitInfo
	}
	return p.ModTime, TimestampModTime
}
