package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/plan"
)

// LogStateOf describes a snapshot as the desired side of Diff; location is
// where the log was read.
func LogStateOf(s *deltalog.Snapshot, location string) plan.LogState {
	return plan.LogState{
		Version:              s.Version,
		CommitTimestamp:      s.CommitTimestamp,
		CommitTimestampInLog: s.CommitTimestampSource.FromContent(),
		Protocol: catalog.Protocol{
			MinReaderVersion: s.Protocol.MinReaderVersion, MinWriterVersion: s.Protocol.MinWriterVersion,
			ReaderFeatures: slices.Clone(s.Protocol.ReaderFeatures), WriterFeatures: slices.Clone(s.Protocol.WriterFeatures),
		},
		SchemaString:     s.Metadata.SchemaString,
		PartitionColumns: slices.Clone(s.Metadata.PartitionColumns),
		Configuration:    s.Configuration(),
		Description:      s.Metadata.Description,
		Clustering:       s.ClusteringColumns(),
		Location:         location,
		TableID:          s.Metadata.ID,
		SchemaIs:         s.SchemaIs,
	}
}

// isLogContentError reports errors about what the log holds (as opposed to
// failing to reach storage): such tables are flagged, not retried hard.
func isLogContentError(err error) bool {
	for _, e := range []error{deltalog.ErrNotATable, deltalog.ErrVersionGap, deltalog.ErrUnsupportedFeature,
		deltalog.ErrMissingProtocol, deltalog.ErrMissingMetadata, deltalog.ErrCorrupt, deltalog.ErrBudgetExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// tableLog is one table's Delta log as the reconciler keeps it between
// cycles: the handle opened at url (the catalog's location as the storage
// policy resolved it) with the vended credentials valid until credsValid,
// and the snapshot last read at loc, in compact form. readLog reads it in
// steps: resolve the location, let events skip the read, (re)open the
// handle with fresh credentials when needed, refresh or load the snapshot
// (at the ratified version for a catalog-managed table), and keep it.
type tableLog struct {
	table *deltalog.Table
	url   openedURL // the location table was opened at, as the storage policy resolved it (openurl.go)
	loc   string    // the catalog's location snap was read from
	snap  *deltalog.Snapshot
	// credsValid is until when the vended credentials the table was opened
	// with may still be used (zero: not vended, or expiry unknown).
	credsValid compactTime
}

// readLog reads the table's log at the catalog's location, refreshing the
// previous cycle's snapshot incrementally unless fresh is set. MANAGED
// tables are read at the catalog's latest ratified version.
func (r *Reconciler) readLog(ctx context.Context, st *tableState, rec plan.Record, fresh bool) (plan.LogState, error) {
	tl := &st.tableLog
	loc := rec.Location
	_, openURL, err := r.opts.Storage.Resolve(loc)
	if err != nil {
		return plan.LogState{}, err // refused before any storage request
	}
	skip, fullRead := r.opts.Dirty.logRead(rec.Name.String(), loc, r.mayReuse(tl, rec, openURL, fresh))
	if skip {
		return LogStateOf(tl.snap, loc), nil
	}
	if err := r.open(ctx, tl, rec, openURL); err != nil {
		return plan.LogState{}, err
	}
	snap, err := tl.read(ctx, ratified(&rec), fresh)
	if err != nil {
		return plan.LogState{}, err
	}
	log := LogStateOf(snap, loc)
	tl.keep(snap, &log, &rec, loc)
	fullRead()
	return log, nil
}

// open makes tl's handle one opened at openURL with credentials that are
// still good: it vends new ones when the handle is (re)opened or its
// credentials are about to expire, and reopens with them; the snapshot
// carries over to a new handle at the same URL.
func (r *Reconciler) open(ctx context.Context, tl *tableLog, rec plan.Record, openURL string) error {
	opts := r.logOptions // no spare capacity: an append below copies it
	reopen := tl.table == nil || !tl.url.is(openURL)
	if r.opts.VendedCredentials && (reopen || r.credsExpired(tl)) {
		creds, err := r.credentials(ctx, rec)
		if err != nil {
			return err
		}
		opts = append(opts, deltalog.WithCredentials(creds.Credentials))
		tl.credsValid = 0
		if !creds.Expiration.IsZero() {
			tl.credsValid = compactTimeOf(creds.Expiration.Add(-credentialMargin))
		}
		reopen = true
	}
	if !reopen {
		return nil
	}
	if tl.table != nil {
		_ = tl.table.Close()
	}
	t, err := deltalog.Open(ctx, openURL, opts...)
	if err != nil {
		tl.table, tl.snap = nil, nil
		return err
	}
	if !tl.url.is(openURL) {
		tl.snap = nil
		tl.url = keepURL(openURL, rec.Location)
	}
	tl.table = t
	return nil
}

// credsExpired reports whether tl's vended credentials are due to be
// replaced (always false without vended credentials).
func (r *Reconciler) credsExpired(tl *tableLog) bool {
	return r.opts.VendedCredentials && !r.opts.Now().Before(tl.credsValid.Time())
}

// ratified are the load options of a catalog-managed table: the commits
// the catalog ratified and its latest version; none for any other.
func ratified(rec *plan.Record) deltalog.LoadOptions {
	var lo deltalog.LoadOptions
	if rec.Managed() {
		for _, c := range rec.Commits {
			lo.RatifiedCommits = append(lo.RatifiedCommits, deltalog.RatifiedCommit{Version: c.Version, FileName: c.FileName})
		}
		lo.MaxRatifiedVersion = rec.LatestTableVersion
	}
	return lo
}

// read refreshes the kept snapshot (unless fresh), or loads the log
// whole when there is none or the refresh fails. A failed load forgets
// the snapshot.
func (tl *tableLog) read(ctx context.Context, lo deltalog.LoadOptions, fresh bool) (*deltalog.Snapshot, error) {
	var snap *deltalog.Snapshot
	var err error
	if tl.snap != nil && !fresh {
		snap, _, err = tl.table.Refresh(ctx, tl.snap, lo)
	}
	if snap == nil || err != nil {
		snap, err = tl.table.Load(ctx, lo)
	}
	if err != nil {
		tl.snap = nil
		return nil, err
	}
	return snap, nil
}

// keep stores snap, read at loc, for the next cycle in compact form (no
// schema tree or string, no raw JSON); this cycle diffs with log, what was
// read: after a Load or a metaData commit, the schema string itself. A
// table whose catalog columns are not its log's schema string, written
// alike, keeps the string: its next full reconcile needs it (drift a
// watch-only policy leaves, or a writer spelling field metadata its own
// way), and would otherwise read the whole log again each time.
func (tl *tableLog) keep(snap *deltalog.Snapshot, log *plan.LogState, rec *plan.Record, loc string) {
	if snap.Metadata.SchemaString != "" && !log.SchemaIsCatalogs(rec) {
		tl.snap = snap.CompactKeepingSchema()
	} else {
		tl.snap = snap.Compact()
	}
	tl.loc = loc
}

// mayReuse reports whether the table's previous snapshot could stand for
// its log at rec without reopening it: same location (openURL is rec's
// location as the storage policy resolved it), and for a managed table the
// catalog's ratified version is the snapshot's.
func (r *Reconciler) mayReuse(tl *tableLog, rec plan.Record, openURL string, fresh bool) bool {
	if fresh || tl.snap == nil || tl.table == nil || !tl.url.is(openURL) || r.credsExpired(tl) {
		return false
	}
	if rec.Managed() {
		v := rec.LatestTableVersion
		return v != nil && *v == tl.snap.Version
	}
	return true
}

// credentials fetches READ credentials for the table: the catalog client
// picks the one whose prefix is the longest match of the location. A
// catalog without the Delta API vends them by table id (catalog/uc).
func (r *Reconciler) credentials(ctx context.Context, rec plan.Record) (vended, error) {
	v, ok := r.opts.Catalog.(catalog.Vendor)
	if !ok {
		return vended{}, fmt.Errorf("vending READ credentials: a %s vends none", kindTitle(r.opts.Catalog))
	}
	if err := r.turns.take(ctx); err != nil {
		return vended{}, fmt.Errorf("vending READ credentials: %w", err)
	}
	defer r.turns.give()
	c, err := v.ReadCredentials(ctx, rec)
	if err != nil {
		return vended{}, fmt.Errorf("vending READ credentials: %w", err)
	}
	return vended{Credentials: deltalog.Credentials{
		S3AccessKeyID: c.S3AccessKeyID, S3SecretAccessKey: c.S3SecretAccessKey,
		S3SessionToken: c.S3SessionToken, AzureSASToken: c.AzureSASToken, GCSOAuthToken: c.GCSOAuthToken,
	}, Expiration: c.Expiration}, nil
}

// vended is a table's READ credentials and when they stop working (zero:
// unknown, so they are vended again every cycle).
type vended struct {
	deltalog.Credentials
	Expiration time.Time
}

// credentialMargin is how long before their expiry vended credentials are
// replaced, so that no read of a cycle runs with credentials about to lapse.
const credentialMargin = 5 * time.Minute
