package deltalog

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	stdsync "sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Table is one Delta table root in one bucket. It is safe for concurrent
// use: it holds no mutable state besides the bucket.
type Table struct {
	bucket *blob.Bucket // the table's keys are prefix + "_delta_log/..."
	// prefix is where the table's root is in bucket: "" when bucket is
	// rooted at the table (NewTable), else "path/to/table/" (Open).
	prefix string
	name   string // for errors
	opts   options
	// ownsBucket makes Close close the bucket (set by Open, which made it).
	ownsBucket bool
	// root confines the reads of a local table to its directory (see confine).
	root *localRoot
	// gate limits and backs off the requests of an object-store table
	// (Open), shared with the other tables of its bucket; nil otherwise.
	gate *bucketGate
}

// NewTable returns a Table over bucket, which must already be rooted at
// the table directory (its keys are "_delta_log/..."). name is used in
// errors. The caller keeps ownership of bucket: Close does not close it.
// With WithObserver every request the Table makes is reported.
func NewTable(bucket *blob.Bucket, name string, opts ...Option) *Table {
	o := applyOptions(opts)
	if !o.concurrent {
		o.observer = serialize(o.observer)
	}
	return &Table{bucket: bucket, name: name, opts: o}
}

// serialize makes calls to obs from one Table's concurrent fetches
// mutually exclusive, so a simple observer needs no locking of its own.
func serialize(obs Observer) Observer {
	if obs == nil {
		return nil
	}
	var mu stdsync.Mutex
	return func(op string, d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		obs(op, d, err)
	}
}

// Close releases the bucket if the Table opened it (Open); it is a no-op
// for tables made with NewTable.
func (t *Table) Close() error {
	if t == nil || !t.ownsBucket || t.bucket == nil {
		return nil
	}
	if t.root != nil {
		_ = t.root.Close()
	}
	return t.bucket.Close()
}

// LoadOptions carry what the catalog knows about a catalog-managed table.
type LoadOptions struct {
	// RatifiedCommits are the catalog's ratified commits (any order). They
	// are read from _delta_log/_staged_commits/ by name, in place of any
	// published commit of the same version. Without them, unratified
	// staged files are ignored.
	RatifiedCommits []RatifiedCommit
	// MaxRatifiedVersion is the catalog's latest table version: commits,
	// checkpoints and compactions above it are ignored.
	MaxRatifiedVersion *int64
	// MaxLoadBytes is the memory budget of this Load: the most bytes of
	// log files it holds at once (commits being parsed or fetched ahead,
	// streamed lines kept, checkpoint blocks, pages decoded from them).
	// Going over it fails the Load with ErrBudgetExceeded, naming the file
	// and the budget. 0 means the Table's (WithMaxLoadBytes), else
	// DefaultMaxLoadBytes; negative, no limit.
	// Refresh applies it to its incremental replay and to the full Load
	// it falls back to.
	MaxLoadBytes int64
}

// RatifiedCommit is one commit ratified by the catalog.
type RatifiedCommit struct {
	Version  int64
	FileName string // basename under _delta_log/_staged_commits/
}

// Load reads the latest snapshot of the table.
//
// Requests: one GET of _last_checkpoint (a hint: when missing, empty,
// stale or wrong it is ignored), one LIST of _delta_log/ starting at the
// hinted checkpoint (from the beginning without a usable hint; a second
// LIST only when the hinted checkpoint is gone), then GETs of only the
// files needed: commits after the newest complete checkpoint newest first,
// stopping once protocol and metaData are found (all of them when the
// table has domain metadata), then the checkpoint's protocol/metaData
// columns (one GET for a checkpoint of up to 1 MiB, else one per 256 KiB
// block touched: the footer's and the projected chunks'). Commits are
// fetched concurrently and applied in order: above a checkpoint up to 31
// at once from the start, with the checkpoint read alongside; without a
// checkpoint below in a window growing from 1 to 32. A replay that stops
// early may have fetched the rest of its window (and, above a checkpoint,
// the checkpoint). Ratified commits are read by name, never listed.
// Sidecars are never opened.
//
// CommitTimestamp is the newest file's in-commit timestamp when
// delta.enableInCommitTimestamps is true, else its commitInfo.timestamp,
// else its modification time. When the latest version is a checkpoint
// whose JSON commit is gone, that is the checkpoint file's modification
// time. CommitTimestampSource says which: only the first two are the
// log's content.
func (t *Table) Load(ctx context.Context, opts LoadOptions) (*Snapshot, error) {
	files, floor, err := t.listFromHint(ctx)
	if err != nil {
		return nil, t.fail("load", err)
	}
	ratified, lerr := ratifiedPaths(opts.RatifiedCommits)
	if lerr != nil {
		return nil, t.fail("load", lerr)
	}
	seg, lerr := buildSegment(segmentInput{files: files, ratified: ratified, maxVersion: opts.MaxRatifiedVersion, floor: floor})
	if lerr != nil && errors.Is(lerr.Err, errNoCheckpointAtFloor) {
		if files, err = t.list(ctx, ""); err != nil {
			return nil, t.fail("load", err)
		}
		seg, lerr = buildSegment(segmentInput{files: files, ratified: ratified, maxVersion: opts.MaxRatifiedVersion, floor: -1})
	}
	if lerr != nil {
		return nil, t.fail("load", lerr)
	}
	b := t.opts.loadBudget(ctx, opts)
	defer b.close() // whatever is still held, on every way out
	snap, lerr := t.loadSegment(ctx, seg, b)
	if lerr != nil {
		return nil, t.fail("load", lerr)
	}
	return snap, nil
}

// loadSegment replays a segment into a snapshot.
func (t *Table) loadSegment(ctx context.Context, seg *segment, b *budget) (*Snapshot, *LogError) {
	var order []logPath
	for i := len(seg.units) - 1; i >= 0; i-- {
		order = append(order, seg.units[i])
	}
	if seg.latest != nil && seg.latest.Version == seg.cpVersion {
		order = append(order, *seg.latest) // for the commit timestamp
	}
	order = append(order, seg.checkpoint...)
	r := &replay{budget: b}
	if err := t.run(ctx, r, order); err != nil {
		return nil, err
	}
	origin := commitKey(0)
	switch {
	case len(seg.checkpoint) > 0:
		origin = seg.checkpoint[0].Key
	case len(seg.units) > 0:
		origin = seg.units[0].Key
	}
	snap, err := finish(r, seg.version, origin)
	if err != nil {
		return nil, err
	}
	snap.state.cpVersion = seg.cpVersion
	if seg.latest != nil {
		snap.state.latestKey = seg.latest.Key
		snap.state.staged = seg.latest.Kind == kindStagedCommit
		snap.state.latest = stampOf(*seg.latest)
	}
	return snap, nil
}

// finish validates the replayed actions and builds the snapshot. origin
// names the oldest file of the segment for errors about missing actions.
func finish(r *replay, version int64, origin string) (*Snapshot, *LogError) {
	if r.protocol == nil {
		return nil, &LogError{Version: version, File: origin, Err: reason(ErrMissingProtocol,
			"none from %s through version %d; every table's log must hold one (its reader and writer requirements)", baseName(origin), version)}
	}
	if err := checkReadable(r.protocol); err != nil {
		return nil, &LogError{Version: version, File: orDefault(r.protocolFile, origin), Err: err}
	}
	if r.metadata == nil {
		return nil, &LogError{Version: version, File: origin, Err: reason(ErrMissingMetadata,
			"none from %s through version %d; every table's log must hold one (its schema and properties)", baseName(origin), version)}
	}
	var schema *StructType
	if r.metadata.SchemaString != "" || r.schemaSum == ([sha256.Size]byte{}) {
		var err error
		schema, err = ParseSchema(r.metadata.SchemaString)
		if err != nil {
			return nil, &LogError{Version: version, File: orDefault(r.metadataFile, origin), Err: reason(ErrCorrupt, "metaData.schemaString: %v", err)}
		}
	} // else: carried over from a compact snapshot, parsed when first read
	snap := &Snapshot{
		Version:        version,
		Protocol:       *r.protocol,
		Metadata:       *r.metadata,
		Schema:         schema,
		CatalogManaged: r.protocol.catalogManaged(),
	}
	snap.CommitTimestamp, snap.CommitTimestampSource = commitTimestamp(r, r.metadata)
	if r.protocol.hasWriterFeature("domainMetadata") {
		snap.Domains = map[string]string{}
		for k, v := range r.domains {
			snap.Domains[k] = v
		}
	}
	snap.state.rawProtocol, snap.state.rawMetadata = r.rawProtocol, r.rawMetadata
	snap.state.schemaSum = r.schemaSum
	return snap, nil
}

// maxHintBytes caps the read of _last_checkpoint. By the protocol it is a
// few hundred bytes (a v2 checkpoint's hint may inline its non-file
// actions: a few KB, a schema's worth); a bigger one is not read at all
// but ignored like any unusable hint, and the whole log is listed: the
// hint is optional, and the listing has the last word anyway.
const maxHintBytes = 1 << 20

// listFromHint reads _last_checkpoint and lists from the hinted version.
// floor is the hinted version, or -1 when the whole log was listed.
func (t *Table) listFromHint(ctx context.Context) ([]logPath, int64, error) {
	data, err := t.get(ctx, logDir+"_last_checkpoint", maxHintBytes)
	if err != nil && ctx.Err() != nil {
		return nil, 0, ctx.Err()
	}
	if errors.Is(err, ErrThrottled) {
		// Listing the whole log instead would send a throttled bucket more.
		return nil, 0, err
	}
	if err == nil {
		if lc, ok := parseLastCheckpoint(data); ok {
			files, err := t.list(ctx, versionPrefixKey(lc.Version))
			return files, lc.Version, err
		}
	}
	files, err := t.list(ctx, "")
	return files, -1, err
}

// list is one LIST of _delta_log/ after startAfter, parsed.
func (t *Table) list(ctx context.Context, startAfter string) ([]logPath, error) {
	objs, err := t.listObjects(ctx, startAfter)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound && !errors.Is(err, ErrBucketNotFound) {
			return nil, nil
		}
		return nil, &LogError{Version: -1, File: logDir, Err: err}
	}
	files := make([]logPath, 0, len(objs))
	for _, o := range objs {
		if o.IsDir {
			continue
		}
		p := parseLogPath(o.Key)
		if p.Kind == kindUnknown {
			continue
		}
		p.Size, p.ModTime, p.Tag = o.Size, o.ModTime.UnixMilli(), contentTag(o.MD5)
		files = append(files, p)
	}
	return files, nil
}

// ratifiedPaths turns the catalog's ratified commits into log paths.
func ratifiedPaths(rcs []RatifiedCommit) ([]logPath, *LogError) {
	out := make([]logPath, 0, len(rcs))
	for _, rc := range rcs {
		key := stagedKey(rc.FileName)
		p := parseLogPath(key)
		if p.Kind != kindStagedCommit || p.Version != rc.Version {
			return nil, &LogError{Version: rc.Version, File: key, Err: reason(ErrCorrupt,
				"ratified commit %d: file name %q is not <version>.<uuid>.json for that version", rc.Version, rc.FileName)}
		}
		out = append(out, p)
	}
	return out, nil
}

// fail completes err as a *LogError for this table and operation.
func (t *Table) fail(op string, err error) error {
	var le *LogError
	if !errors.As(err, &le) {
		le = &LogError{Version: -1, Err: err}
	}
	out := *le
	out.Op, out.Table = op, t.name
	if out.Err == nil {
		out.Err = fmt.Errorf("unknown error")
	}
	return &out
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
