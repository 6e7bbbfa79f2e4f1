package deltalog

import (
	"context"
	"encoding/json"
	"errors"
	stdsync "sync"
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

// prefetchMax bounds how many JSON files are fetched concurrently.
const prefetchMax = 16

// idleConnsPerHost is how many idle connections per host an object-store
// client keeps for reuse: the GETs in flight of a few concurrent Loads.
const idleConnsPerHost = 4 * prefetchMax

// run reads files (newest first) until done. JSON files are fetched in
// windows of 1, 2, 4, ... up to prefetchMax concurrent GETs and applied in
// order, so on object stores a long run of commits costs a few round
// trips, while a replay that stops early wastes at most the rest of one
// window. Parquet checkpoints are read one at a time (a few block GETs).
func (t *Table) run(ctx context.Context, r *replay, files []logPath) *LogError {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	window := 1
	// free holds the buffers of commits already parsed, for later GETs:
	// nothing parsed keeps a reference into a file's bytes.
	var free [][]byte
	for i := 0; i < len(files) && !r.done(); {
		n := 0
		for n < window && i+n < len(files) && !files[i+n].Parquet {
			n++
		}
		if n == 0 {
			p := &files[i]
			fa, err := t.readParquet(ctx, p, r.wantDomains())
			if err != nil {
				return err
			}
			r.apply(p, fa)
			i++
			continue
		}
		fetched := t.fetchAll(ctx, files[i:i+n], &free)
		for j := range n {
			if r.done() {
				return nil
			}
			p := &files[i+j]
			if fetched[j].err != nil {
				return fileErr(p.Version, p.Key, 0, fetched[j].err)
			}
			// Only the newest file's commitInfo is used (its timestamp).
			fa, err := parseJSONFile(p, fetched[j].data, r.newest == nil)
			if err != nil {
				return err
			}
			free = append(free, fetched[j].data)
			r.apply(p, fa)
		}
		i += n
		window = min(window*2, prefetchMax)
	}
	return nil
}

// fetched is the result of one GET.
type fetched struct {
	data []byte
	err  error
}

// fetchAll GETs files concurrently (one goroutine each; callers bound len),
// reading into buffers taken from free when there are any.
func (t *Table) fetchAll(ctx context.Context, files []logPath, free *[][]byte) []fetched {
	out := make([]fetched, len(files))
	for i := range out {
		if k := len(*free); k > 0 {
			out[i].data, *free = (*free)[k-1], (*free)[:k-1]
		}
	}
	if len(files) == 1 {
		out[0].data, out[0].err = t.get(ctx, files[0].Key, out[0].data)
		return out
	}
	var wg stdsync.WaitGroup
	for i := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].data, out[i].err = t.get(ctx, files[i].Key, out[i].data)
		}()
	}
	wg.Wait()
	return out
}

// readParquet reads the projected actions of a Parquet checkpoint.
func (t *Table) readParquet(ctx context.Context, p *logPath, wantDomains bool) (*fileActions, *LogError) {
	ra, size, err := t.readerAt(ctx, p.Key, p.Size)
	if err != nil {
		return nil, fileErr(p.Version, p.Key, 0, err)
	}
	fa, err := readParquetActions(newBlockReaderAt(ra, size, checkpointBlock(size)), size, wantDomains)
	if err != nil {
		return nil, fileErr(p.Version, p.Key, 0, err)
	}
	return fa, nil
}

// parseJSONFile parses a JSON log file, naming the line of any error.
// commitInfo is decoded only when wantCommitInfo.
func parseJSONFile(p *logPath, data []byte, wantCommitInfo bool) (*fileActions, *LogError) {
	fa, err := parseLines(data, wantCommitInfo)
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return nil, fileErr(p.Version, p.Key, le.Line, le.Err)
		}
		return nil, fileErr(p.Version, p.Key, 0, err)
	}
	return fa, nil
}

// commitTimestamp picks the timestamp of the newest file read: the
// in-commit timestamp when ict is enabled and present, else
// commitInfo.timestamp, else the file's modification time.
func commitTimestamp(r *replay, md *Metadata) int64 {
	fa, p := r.newest, r.newestFile
	if fa == nil || p == nil {
		return 0
	}
	if fa.ict != nil && md != nil && md.Configuration["delta.enableInCommitTimestamps"] == "true" {
		return *fa.ict
	}
	if fa.timestamp != nil {
		return *fa.timestamp
	}
	return p.ModTime
}
