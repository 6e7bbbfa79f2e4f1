package deltalog

import (
	"fmt"
	"strconv"
	"strings"
)

// logDir is the key prefix of a table's transaction log, relative to the
// table root.
const logDir = "_delta_log/"

// pathKind is the kind of a file in _delta_log.
type pathKind int

const (
	kindUnknown         pathKind = iota
	kindCommit                   // <v>.json
	kindCheckpoint               // <v>.checkpoint.parquet (classic, single file)
	kindMultiCheckpoint          // <v>.checkpoint.<i>.<n>.parquet
	kindV2Checkpoint             // <v>.checkpoint.<uuid>.json|parquet
	kindCompaction               // <from>.<to>.compacted.json
	kindChecksum                 // <v>.crc
	kindLastCheckpoint           // _last_checkpoint
	kindStagedCommit             // _staged_commits/<v>.<uuid>.json
)

// String names the kind for messages and tests.
func (k pathKind) String() string {
	switch k {
	case kindCommit:
		return "commit"
	case kindCheckpoint:
		return "checkpoint"
	case kindMultiCheckpoint:
		return "multi-part checkpoint"
	case kindV2Checkpoint:
		return "v2 checkpoint"
	case kindCompaction:
		return "compaction"
	case kindChecksum:
		return "checksum"
	case kindLastCheckpoint:
		return "_last_checkpoint"
	case kindStagedCommit:
		return "staged commit"
	}
	return "unknown"
}

// logPath is a parsed _delta_log file name.
type logPath struct {
	Key     string   // full key under the table root ("_delta_log/...")
	Kind    pathKind // kindUnknown for files deltalog ignores
	Version int64    // commit/checkpoint version; compaction: first version
	End     int64    // compaction: last version (inclusive)
	Part    int      // multi-part checkpoint: 1-based part number
	Parts   int      // multi-part checkpoint: number of parts
	UUID    string   // v2 checkpoint / staged commit
	Parquet bool     // the file is Parquet (checkpoints)
	Size    int64    // from the listing, -1 when unknown
	ModTime int64    // from the listing, ms since epoch, 0 when unknown
	Tag     uint64   // from the listing: the content hash the store reports (S3 ETag, GCS/Azure MD5), 0 when none
}

// versionDigits is the width of zero-padded version numbers in file names.
const versionDigits = 20

// parseLogPath classifies key (a key under the table root). Files that do
// not follow the Delta naming rules get kindUnknown and are ignored.
func parseLogPath(key string) logPath {
	p := classify(key)
	if p.Kind == kindUnknown {
		return logPath{Key: key, Size: -1}
	}
	return p
}

// classify does the work of parseLogPath; fields of unknown files may be
// partly filled.
func classify(key string) logPath {
	p := logPath{Key: key, Size: -1}
	name, ok := strings.CutPrefix(key, logDir)
	if !ok {
		return p
	}
	if name == "_last_checkpoint" {
		p.Kind = kindLastCheckpoint
		return p
	}
	if staged, ok := strings.CutPrefix(name, "_staged_commits/"); ok {
		return parseStaged(p, staged)
	}
	if strings.Contains(name, "/") || len(name) < versionDigits+1 {
		return p
	}
	v, ok := parseVersion(name[:versionDigits])
	if !ok || name[versionDigits] != '.' {
		return p
	}
	rest := name[versionDigits+1:]
	p.Version = v
	switch {
	case rest == "json":
		p.Kind = kindCommit
	case rest == "crc":
		p.Kind = kindChecksum
	case rest == "checkpoint.parquet":
		p.Kind, p.Parquet = kindCheckpoint, true
	case strings.HasPrefix(rest, "checkpoint."):
		return parseCheckpoint(p, strings.TrimPrefix(rest, "checkpoint."))
	case strings.HasSuffix(rest, ".compacted.json"):
		end, ok := parseVersion(strings.TrimSuffix(rest, ".compacted.json"))
		if ok && end >= v {
			p.Kind, p.End = kindCompaction, end
		}
	}
	return p
}

// parseCheckpoint handles "<i>.<n>.parquet" and "<uuid>.json|parquet".
func parseCheckpoint(p logPath, rest string) logPath {
	fields := strings.Split(rest, ".")
	if len(fields) == 3 && fields[2] == "parquet" && len(fields[0]) == 10 && len(fields[1]) == 10 {
		i, err1 := strconv.Atoi(fields[0])
		n, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil && i >= 1 && n >= 1 && i <= n {
			p.Kind, p.Part, p.Parts, p.Parquet = kindMultiCheckpoint, i, n, true
		}
		return p
	}
	if len(fields) == 2 && isUUID(fields[0]) && (fields[1] == "json" || fields[1] == "parquet") {
		p.Kind, p.UUID, p.Parquet = kindV2Checkpoint, fields[0], fields[1] == "parquet"
	}
	return p
}

// parseStaged handles "_staged_commits/<v>.<uuid>.json".
func parseStaged(p logPath, name string) logPath {
	fields := strings.Split(name, ".")
	if len(fields) != 3 || fields[2] != "json" || len(fields[0]) != versionDigits {
		return p
	}
	v, ok := parseVersion(fields[0])
	if ok && isUUID(fields[1]) {
		p.Kind, p.Version, p.UUID = kindStagedCommit, v, fields[1]
	}
	return p
}

// parseVersion parses a run of decimal digits as a non-negative version.
func parseVersion(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// isUUID reports whether s looks like 8-4-4-4-12 hex.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
				return false
			}
		}
	}
	return true
}

// commitKey is the key of the published commit file for version v.
func commitKey(v int64) string { return fmt.Sprintf("%s%020d.json", logDir, v) }

// versionPrefixKey sorts just before every file of version v; listing
// after it includes all of v's files.
func versionPrefixKey(v int64) string { return fmt.Sprintf("%s%020d", logDir, v) }

// stagedKey is the key of a catalog's staged commit file.
func stagedKey(fileName string) string { return logDir + "_staged_commits/" + fileName }
