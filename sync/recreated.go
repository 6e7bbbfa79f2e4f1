package sync

import (
	"fmt"
	"github.com/deltasync/deltasync/sync/plan"
	"strings"
	"time"
)

// This file decides the one lifetime question a version number cannot:
// the catalog records a newer version than the log holds. Either the log
// at that location is another table (deleted and written again, or
// dropped, rewritten and registered again) and the log wins, or it is the
// same table behind (a lagging replica, a restored backup) and nothing
// older is pushed. The evidence is the log's own content: its metaData.id
// against the one last read at this location, and the time written in its
// newest commit (in-commit timestamp or commitInfo.timestamp) against the
// time of the commit the catalog's watermark names
// (last-commit-timestamp-ms, which update-metadata-snapshot-version sets
// with the version). A commit without either is timed by its file's
// modification time, which a copy or a restore makes fresh: that is never
// evidence. The catalog record keeps no metaData.id of its own.

// previousID is the metaData.id of the last log read at rec's location
// that the catalog's watermark was not ahead of (tableState.describedID),
// "" when there is none. It is not the log read last: once a log behind
// the watermark has been read, that one would be its own evidence.
func previousID(st *tableState, rec *plan.Record) string {
	if st.loc != rec.Location {
		return ""
	}
	return st.describedID
}

// behindLog decides a log whose latest version is below the catalog's
// watermark. prevID is previousID before this reconcile read the log. It
// returns the evidence that the log was recreated (it is synced, and the
// plan says why), or the error that flags a log merely behind. The newest
// commit's time is evidence only when the log holds it (see
// plan.LogState.CommitTimestampInLog).
func behindLog(rec *plan.Record, log *plan.LogState, prevID string) (recreated string, err error) {
	var evidence []string
	if prevID != "" && log.TableID != prevID {
		evidence = append(evidence, fmt.Sprintf("metaData.id %s, where the log read here before had %s", log.TableID, prevID))
	}
	ts := rec.LastCommitTimestampMs
	if ts != nil && log.CommitTimestampInLog && log.CommitTimestamp > *ts {
		evidence = append(evidence, fmt.Sprintf("its newest commit (version %d, %s) is newer than the one the catalog's watermark names (version %d, %s)",
			log.Version, msTime(log.CommitTimestamp), *rec.LastCommitVersion, msTime(*ts)))
	}
	if len(evidence) > 0 {
		return "log was recreated: " + strings.Join(evidence, "; "), nil
	}
	return "", failed(ReasonConflict, fmt.Errorf(
		"catalog records log version %d but the log's latest is %d; not pushing an older snapshot: the log is behind, not another table (%s): a lagging replica or a restored backup?",
		*rec.LastCommitVersion, log.Version, strings.Join(notRecreated(rec, log, prevID), "; ")))
}

// notRecreated says why behindLog found no evidence that log is another
// table than the one the catalog's watermark names.
func notRecreated(rec *plan.Record, log *plan.LogState, prevID string) []string {
	var why []string
	if prevID != "" {
		why = append(why, fmt.Sprintf("same metaData.id %s as the log read here before", prevID))
	}
	switch ts := rec.LastCommitTimestampMs; {
	case !log.CommitTimestampInLog:
		why = append(why, fmt.Sprintf("its newest commit (version %d) has no commitInfo timestamp: its time (%s) is the file's modification time, not evidence",
			log.Version, msTime(log.CommitTimestamp)))
	case ts == nil:
		why = append(why, fmt.Sprintf("the catalog records no commit time for version %d to compare with", *rec.LastCommitVersion))
	default:
		why = append(why, fmt.Sprintf("its newest commit (version %d, %s) is not newer than the one the watermark names (version %d, %s)",
			log.Version, msTime(log.CommitTimestamp), *rec.LastCommitVersion, msTime(*ts)))
	}
	return why
}

// msTime renders ms since the epoch as an RFC 3339 UTC time with ms.
func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
