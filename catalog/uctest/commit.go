package uctest

import (
	"net/http"
	"strings"
)

// applyCommit is §4.2 step 10 with the rules of §4.7. replay reports an
// idempotent resend of an accepted commit: the whole request is a no-op.
func (s *Server) applyCommit(t *Table, u *updateRequest) (replay bool, aerr *apiError) {
	if t.Type != "MANAGED" {
		return false, invalid("add-commit and set-latest-backfilled-version require a MANAGED Delta table.")
	}
	if u.has["add-commit"] && u.commit == nil {
		return false, invalid("add-commit requires a commit block.")
	}
	if u.has["set-latest-backfilled-version"] && u.publishedVer == nil {
		return false, invalid("set-latest-backfilled-version requires latest-published-version.")
	}
	if u.commit != nil {
		ice, aerr := parseUniform(u.uniform)
		if aerr != nil {
			return false, aerr
		}
		if ice != nil && u.commit.Version != nil && *ice.ConvertedVersion != *u.commit.Version {
			return false, invalid("uniform.iceberg.converted-delta-version (%d) must equal commit version (%d)", *ice.ConvertedVersion, *u.commit.Version)
		}
		if aerr := checkUniformConsistency(t.Properties, ice != nil); aerr != nil {
			return false, aerr
		}
		if ice != nil {
			t.Uniform = storedUniform(ice)
		}
	}
	if u.commit == nil {
		return false, backfillOnly(t, *u.publishedVer)
	}
	c, aerr := checkCommit(u.commit)
	if aerr != nil {
		return false, aerr
	}
	if len(t.Commits) == 0 {
		// Onboarding: no sequencing and no limit check (§4.7, §10.3).
		if s.cfg.firstCommitV1 && c.Version != 1 {
			return false, invalid("The first commit after create must be version 1, but got %d", c.Version)
		}
		// A backfill notice riding on the onboarding commit is ignored.
		t.Commits = append(t.Commits, c)
		return false, nil
	}
	last := t.Commits[len(t.Commits)-1].Version
	if c.Version <= last {
		for _, old := range t.Commits {
			if old.Version != c.Version {
				continue
			}
			if old.FileName == c.FileName && !s.cfg.replayConflict {
				return true, nil
			}
			return false, commitConflict("Commit version already accepted. Version %d was accepted with commit file %s, but the request carried %s.", c.Version, old.FileName, c.FileName)
		}
		return false, commitConflict("Commit version already accepted. Current table version is %d", last)
	}
	if c.Version > last+1 {
		return false, invalid("Commit version must be the next version after the latest commit %d, but got %d", last, c.Version)
	}
	if u.publishedVer != nil && *u.publishedVer > last {
		return false, invalid("Latest backfilled version %d cannot be greater than the last commit version = %d", *u.publishedVer, last)
	}
	// Limit: unbackfilled commits after this commit and its backfill.
	pending := 1
	for _, old := range t.Commits {
		if !old.Backfilled && (u.publishedVer == nil || old.Version > *u.publishedVer) {
			pending++
		}
	}
	if pending > maxUnbackfilledCommits {
		return false, &apiError{Status: http.StatusTooManyRequests, Type: "ResourceExhaustedException", Code: "RESOURCE_EXHAUSTED",
			Message: "Max number of commits per table reached: " + t.UUID}
	}
	// The new commit becomes the newest row, so a backfill in the same
	// request may delete every older one.
	t.Commits = append(t.Commits, c)
	if u.publishedVer != nil {
		backfill(t, *u.publishedVer)
	}
	return false, nil
}

func checkCommit(w *wireCommit) (Commit, *apiError) {
	switch {
	case w.Version == nil || *w.Version <= 0:
		return Commit{}, invalid("Field must be positive: version")
	case w.Timestamp == nil || *w.Timestamp <= 0:
		return Commit{}, invalid("Field must be positive: timestamp")
	case w.FileName == nil || *w.FileName == "":
		return Commit{}, invalid("Field can not be empty: file_name")
	case w.FileSize == nil || *w.FileSize <= 0:
		return Commit{}, invalid("Field must be positive: file_size")
	case w.FileModificationTimestamp == nil || *w.FileModificationTimestamp <= 0:
		return Commit{}, invalid("Field must be positive: file_modification_timestamp")
	case strings.ContainsAny(*w.FileName, `/\`) || *w.FileName == "." || *w.FileName == "..":
		return Commit{}, invalid("commit.file-name must be a single path segment, got %q", *w.FileName)
	}
	return Commit{Version: *w.Version, Timestamp: *w.Timestamp, FileName: *w.FileName, FileSize: *w.FileSize,
		FileModificationTimestamp: *w.FileModificationTimestamp}, nil
}

func backfillOnly(t *Table, v int64) *apiError {
	if len(t.Commits) == 0 {
		return invalid("Backfill request requires a prior commit; the table's commit log is empty.")
	}
	last := t.Commits[len(t.Commits)-1].Version
	if v > last {
		return invalid("Should not backfill version %d while the last version committed is %d", v, last)
	}
	backfill(t, v)
	return nil
}

// backfill drops the rows up to v, always keeping the newest row, which is
// marked backfilled when v covers it.
func backfill(t *Table, v int64) {
	n := len(t.Commits)
	if n == 0 {
		return
	}
	newest := t.Commits[n-1]
	kept := t.Commits[:0:0]
	for _, c := range t.Commits[:n-1] {
		if c.Version > v {
			kept = append(kept, c)
		}
	}
	if newest.Version <= v {
		newest.Backfilled = true
	}
	t.Commits = append(kept, newest)
}
