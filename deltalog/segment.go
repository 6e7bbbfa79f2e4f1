package deltalog

import (
	"fmt"
	"sort"
)

// segment is the validated set of files that make up the latest snapshot:
// the newest complete checkpoint (if any) and, after it, a contiguous run
// of commits, some of which may be replaced by compaction files.
type segment struct {
	version    int64     // latest version
	checkpoint []logPath // all files of the chosen checkpoint; nil if none
	cpVersion  int64     // version of checkpoint, -1 if none
	units      []logPath // commits/compactions after the checkpoint, oldest first
	latest     *logPath  // JSON commit (published or staged) of version, if any
}

// segmentInput is what buildSegment works from.
type segmentInput struct {
	files      []logPath // parsed listing of _delta_log/
	ratified   []logPath // catalog-ratified staged commits (kindStagedCommit)
	maxVersion *int64    // ignore anything above, when set
	floor      int64     // versions below this were not listed (hint); -1 for a full listing
}

// errNoCheckpointAtFloor reports that a listing started at a hinted
// checkpoint found no usable checkpoint: the caller lists the whole log.
var errNoCheckpointAtFloor = fmt.Errorf("no complete checkpoint at or after the _last_checkpoint hint")

// buildSegment selects the checkpoint and commits for the latest version.
// Errors wrap ErrNotATable or ErrVersionGap and carry the missing version.
func buildSegment(in segmentInput) (*segment, *LogError) {
	above := func(v int64) bool { return in.maxVersion != nil && v > *in.maxVersion }
	commits := map[int64]logPath{}
	checkpoints := map[int64][]logPath{}
	var compactions []logPath
	for _, p := range in.files {
		if above(p.Version) {
			continue
		}
		switch p.Kind {
		case kindCommit:
			commits[p.Version] = p
		case kindCheckpoint, kindMultiCheckpoint, kindV2Checkpoint:
			checkpoints[p.Version] = append(checkpoints[p.Version], p)
		case kindCompaction:
			if !above(p.End) {
				compactions = append(compactions, p)
			}
		}
	}
	for _, p := range in.ratified {
		if !above(p.Version) {
			commits[p.Version] = p // the catalog's staged commit wins
		}
	}
	seg := &segment{version: -1, cpVersion: -1}
	for v := range commits {
		seg.version = max(seg.version, v)
	}
	cpVersions := make([]int64, 0, len(checkpoints))
	for v := range checkpoints {
		cpVersions = append(cpVersions, v)
	}
	sort.Slice(cpVersions, func(i, j int) bool { return cpVersions[i] > cpVersions[j] })
	for _, v := range cpVersions {
		if files := completeCheckpoint(checkpoints[v]); files != nil {
			seg.checkpoint, seg.cpVersion = files, v
			break
		}
	}
	seg.version = max(seg.version, seg.cpVersion)
	if seg.version < 0 {
		if in.floor >= 0 {
			return nil, &LogError{Version: -1, Err: errNoCheckpointAtFloor}
		}
		return nil, &LogError{Version: -1, File: logDir, Err: reason(ErrNotATable, "no commit or checkpoint in %s", logDir)}
	}
	if in.floor >= 0 && seg.cpVersion < in.floor {
		return nil, &LogError{Version: -1, Err: errNoCheckpointAtFloor}
	}
	if err := seg.chain(commits, compactions); err != nil {
		return nil, err
	}
	if c, ok := commits[seg.version]; ok {
		seg.latest = &c
	}
	return seg, nil
}

// chain fills units with a contiguous run of commits from just after the
// checkpoint (or 0) to the latest version, using the longest compaction
// that starts at a version and ends before the latest version.
func (s *segment) chain(commits map[int64]logPath, compactions []logPath) *LogError {
	v := s.cpVersion + 1
	if s.cpVersion < 0 {
		if _, ok := commits[0]; !ok {
			first := s.version
			for c := range commits {
				first = min(first, c)
			}
			return &LogError{Version: 0, File: commitKey(0), Err: reason(ErrVersionGap,
				"log has no checkpoint and its first commit is version %d, not 0", first)}
		}
	}
	for v <= s.version {
		var best *logPath
		for i := range compactions {
			c := &compactions[i]
			if c.Version == v && c.End < s.version && (best == nil || c.End > best.End) {
				best = c
			}
		}
		if best != nil {
			s.units = append(s.units, *best)
			v = best.End + 1
			continue
		}
		c, ok := commits[v]
		if !ok {
			if s.cpVersion < 0 {
				return &LogError{Version: v, File: commitKey(v), Err: reason(ErrVersionGap,
					"commit %d is missing: the log has no checkpoint, so every commit from 0 to the latest version %d is needed", v, s.version)}
			}
			return &LogError{Version: v, File: commitKey(v), Err: reason(ErrVersionGap,
				"commit %d is missing between checkpoint %d and latest version %d", v, s.cpVersion, s.version)}
		}
		s.units = append(s.units, c)
		v++
	}
	return nil
}

// completeCheckpoint returns the files of one complete checkpoint among
// the candidates of a single version, or nil. A v2 checkpoint or a
// classic single file wins over a multi-part set; a multi-part set needs
// every part 1..n of the same n.
func completeCheckpoint(cands []logPath) []logPath {
	sort.Slice(cands, func(i, j int) bool { return cands[i].Key < cands[j].Key })
	for _, c := range cands {
		if c.Kind == kindV2Checkpoint {
			return []logPath{c}
		}
	}
	for _, c := range cands {
		if c.Kind == kindCheckpoint {
			return []logPath{c}
		}
	}
	byParts := map[int]map[int]logPath{}
	for _, c := range cands {
		if c.Kind != kindMultiCheckpoint {
			continue
		}
		if byParts[c.Parts] == nil {
			byParts[c.Parts] = map[int]logPath{}
		}
		byParts[c.Parts][c.Part] = c
	}
	best := 0
	for n, parts := range byParts {
		if len(parts) == n && n > best {
			best = n
		}
	}
	if best == 0 {
		return nil
	}
	out := make([]logPath, 0, best)
	for i := 1; i <= best; i++ {
		out = append(out, byParts[best][i])
	}
	return out
}
