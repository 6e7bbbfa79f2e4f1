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
		Version:         s.Version,
		CommitTimestamp: s.CommitTimestamp,
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

// readLog reads the table's log at the catalog's location, refreshing the
// previous cycle's snapshot incrementally unless fresh is set. MANAGED
// tables are read at the catalog's latest ratified version.
func (r *Reconciler) readLog(ctx context.Context, st *tableState, rec plan.Record, fresh bool) (plan.LogState, error) {
	loc := rec.Location
	_, openURL, err := r.opts.Storage.Resolve(loc)
	if err != nil {
		return plan.LogState{}, err // refused before any storage request
	}
	skip, fullRead := r.opts.Dirty.logRead(rec.Name.String(), loc, r.mayReuse(st, rec, openURL, fresh))
	if skip {
		return LogStateOf(st.snap, loc), nil
	}
	opts := r.logOptions // no spare capacity: an append below copies it
	reopen := st.table == nil || st.url != openURL
	if r.opts.VendedCredentials && (reopen || !r.opts.Now().Before(st.credsValid.Time())) {
		// Vend only when the table is (re)opened or its credentials are
		// about to expire; the snapshot carries over to the new handle.
		creds, err := r.credentials(ctx, rec)
		if err != nil {
			return plan.LogState{}, err
		}
		opts = append(opts, deltalog.WithCredentials(creds.Credentials))
		st.credsValid = 0
		if !creds.Expiration.IsZero() {
			st.credsValid = compactTimeOf(creds.Expiration.Add(-credentialMargin))
		}
		reopen = true
	}
	if reopen {
		if st.table != nil {
			_ = st.table.Close()
		}
		t, err := deltalog.Open(ctx, openURL, opts...)
		if err != nil {
			st.table, st.snap = nil, nil
			return plan.LogState{}, err
		}
		if st.url != openURL {
			st.snap = nil
		}
		st.table, st.url = t, openURL
	}
	var lo deltalog.LoadOptions
	if rec.Managed() {
		for _, c := range rec.Commits {
			lo.RatifiedCommits = append(lo.RatifiedCommits, deltalog.RatifiedCommit{Version: c.Version, FileName: c.FileName})
		}
		lo.MaxRatifiedVersion = rec.LatestTableVersion
	}
	var snap *deltalog.Snapshot
	if st.snap != nil && !fresh {
		snap, _, err = st.table.Refresh(ctx, st.snap, lo)
	}
	if snap == nil || err != nil {
		snap, err = st.table.Load(ctx, lo)
	}
	if err != nil {
		st.snap = nil
		return plan.LogState{}, err
	}
	// Kept between cycles: the compact form (no schema tree or string, no
	// raw JSON). This cycle diffs with what was read: after a Load or a
	// metaData commit, the schema string itself. A table whose catalog
	// columns are not its log's schema string, written alike, keeps the
	// string: its next full reconcile needs it (drift a watch-only policy
	// leaves, or a writer spelling field metadata its own way), and would
	// otherwise read the whole log again each time.
	log := LogStateOf(snap, loc)
	if snap.Metadata.SchemaString != "" && !log.SchemaIsCatalogs(&rec) {
		st.snap = snap.CompactKeepingSchema()
	} else {
		st.snap = snap.Compact()
	}
	st.loc = loc
	fullRead()
	return log, nil
}

// mayReuse reports whether the table's previous snapshot could stand for
// its log at rec without reopening it: same location (openURL is rec's
// location as the storage policy resolved it), and for a managed table the
// catalog's ratified version is the snapshot's.
func (r *Reconciler) mayReuse(st *tableState, rec plan.Record, openURL string, fresh bool) bool {
	if fresh || st.snap == nil || st.table == nil || st.url != openURL {
		return false
	}
	if r.opts.VendedCredentials && !r.opts.Now().Before(st.credsValid.Time()) {
		return false
	}
	if rec.Managed() {
		v := rec.LatestTableVersion
		return v != nil && *v == st.snap.Version
	}
	return true
}

// credentials fetches READ credentials for the table: the catalog client
// picks the one whose prefix is the longest match of the location. A
// catalog without the Delta API vends them by table id (readonly.go).
func (r *Reconciler) credentials(ctx context.Context, rec plan.Record) (vended, error) {
	var c catalog.Credentials
	var err error
	if r.readOnly(rec.Name.Catalog) {
		c, err = r.classicCredentials(ctx, rec)
	} else {
		c, err = r.opts.Catalog.ReadCredentials(ctx, rec.Name, rec.Location)
	}
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
