package deltalog

import (
	"context"
)

// RefreshResult says what Refresh did.
type RefreshResult int

const (
	// Unchanged means no new version; the previous snapshot is returned as is.
	Unchanged RefreshResult = iota
	// Advanced means new commits were replayed on top of the previous snapshot.
	Advanced
	// Rebuilt means the log no longer continues the previous snapshot (it was
	// rewritten, or its version went backwards): a full Load was done.
	Rebuilt
)

// String returns "unchanged", "advanced" or "rebuilt".
func (r RefreshResult) String() string {
	switch r {
	case Unchanged:
		return "unchanged"
	case Advanced:
		return "advanced"
	case Rebuilt:
		return "rebuilt"
	}
	return "unknown"
}

// Refresh brings prev up to date with one LIST of _delta_log/ starting at
// prev's version.
//
// Nothing new: prev itself is returned with Unchanged, after no GET at
// all. New commits: only they are read, newest first, and whatever they
// do not change (protocol, metaData, domains) is carried over from prev:
// Advanced. A checkpoint written since prev does not force re-reading
// anything. When prev's version is gone from the log or the commits after
// it are not contiguous, the log was rewritten: Refresh does a full Load
// and returns Rebuilt. So it does when the log was rewritten keeping the
// version numbers (deleted and written again at the same path): the listed
// size, modification time or content hash (ETag/MD5, where the store lists
// one) of the newest commit prev read is not what it was when prev read
// it, or a new commit carries a metaData of another table (another id).
// A nil prev is a plain Load (Rebuilt).
func (t *Table) Refresh(ctx context.Context, prev *Snapshot, opts LoadOptions) (*Snapshot, RefreshResult, error) {
	if prev == nil {
		snap, err := t.Load(ctx, opts)
		return snap, Rebuilt, err
	}
	rebuild := func() (*Snapshot, RefreshResult, error) {
		snap, err := t.Load(ctx, opts)
		return snap, Rebuilt, err
	}
	if opts.MaxRatifiedVersion != nil && *opts.MaxRatifiedVersion < prev.Version {
		return rebuild()
	}
	files, err := t.list(ctx, versionPrefixKey(prev.Version))
	if err != nil {
		return nil, Rebuilt, t.fail("refresh", err)
	}
	ratified, lerr := ratifiedPaths(opts.RatifiedCommits)
	if lerr != nil {
		return nil, Rebuilt, t.fail("refresh", lerr)
	}
	if !prev.sameLatest(files) {
		return rebuild() // written again since prev read it: another log at the same path
	}
	newer, found := newCommits(files, ratified, prev.Version, opts.MaxRatifiedVersion)
	if !found {
		return rebuild()
	}
	if len(newer) == 0 {
		return prev, Unchanged, nil
	}
	for i, p := range newer {
		if p.Version != prev.Version+1+int64(i) {
			return rebuild() // a gap: let a full load decide
		}
	}
	// The replay's share of the pool ends before a rebuild's Load starts
	// one of its own.
	snap, lerr := func() (*Snapshot, *LogError) {
		b := t.opts.loadBudget(ctx, opts)
		defer b.close()
		return t.advance(ctx, prev, newer, b)
	}()
	if lerr != nil {
		return nil, Advanced, t.fail("refresh", lerr)
	}
	if snap.Metadata.ID != prev.Metadata.ID {
		return rebuild() // a metaData of another table: the log was replaced
	}
	return snap, Advanced, nil
}

// newCommits returns the commits above version (staged ratified commits
// winning over published ones), in version order, and whether version
// itself is still in the log (as a commit, a ratified commit or a
// checkpoint).
func newCommits(files, ratified []logPath, version int64, maxVersion *int64) ([]logPath, bool) {
	byVersion := map[int64]logPath{}
	found := false
	for _, p := range files {
		switch {
		case p.Version == version && (p.Kind == kindCommit || p.Kind == kindCheckpoint ||
			p.Kind == kindMultiCheckpoint || p.Kind == kindV2Checkpoint):
			found = true
		case p.Kind == kindCommit && p.Version > version:
			byVersion[p.Version] = p
		}
	}
	for _, p := range ratified {
		if p.Version == version {
			found = true
		} else if p.Version > version {
			byVersion[p.Version] = p
		}
	}
	var out []logPath
	for v := version + 1; ; v++ {
		p, ok := byVersion[v]
		if !ok || (maxVersion != nil && v > *maxVersion) {
			break
		}
		out = append(out, p)
		delete(byVersion, v)
	}
	for v := range byVersion {
		if maxVersion == nil || v <= *maxVersion {
			// commits beyond a gap: report them so the caller rebuilds
			out = append(out, logPath{Version: v})
		}
	}
	return out, found
}

// advance replays the new commits (oldest first in newer) on top of prev.
func (t *Table) advance(ctx context.Context, prev *Snapshot, newer []logPath, b *budget) (*Snapshot, *LogError) {
	order := make([]logPath, 0, len(newer))
	for i := len(newer) - 1; i >= 0; i-- {
		order = append(order, newer[i])
	}
	r := &replay{budget: b}
	if err := t.run(ctx, r, order); err != nil {
		return nil, err
	}
	if r.protocol == nil {
		p := prev.Protocol
		r.protocol, r.rawProtocol = &p, prev.state.rawProtocol
	}
	if r.metadata == nil {
		m := prev.Metadata
		m.Configuration = prev.Configuration()
		r.metadata, r.rawMetadata = &m, prev.state.rawMetadata
		if m.SchemaString == "" {
			r.schemaSum = prev.state.schemaSum
		}
	}
	for k, v := range prev.Domains {
		if !r.seen[k] {
			if r.domains == nil {
				r.domains = map[string]string{}
			}
			r.domains[k] = v
		}
	}
	latest := newer[len(newer)-1]
	snap, err := finish(r, latest.Version, latest.Key)
	if err != nil {
		return nil, err
	}
	snap.state.cpVersion = prev.state.cpVersion
	snap.state.latestKey = latest.Key
	snap.state.staged = latest.Kind == kindStagedCommit
	snap.state.latest = stampOf(latest)
	return snap, nil
}
