package deltalog

// LogKey is what a key under a table root is in the Delta log, for callers
// that learn of new objects from elsewhere (storage event notifications).
type LogKey struct {
	// Kind is "commit", "checkpoint", "multi-part checkpoint",
	// "v2 checkpoint", "compaction", "checksum", "_last_checkpoint" or
	// "staged commit"; "" for a key deltalog does not read.
	Kind string
	// Version is the commit or checkpoint version (the first version of a
	// compaction); 0 for _last_checkpoint.
	Version int64
}

// ClassifyLogKey parses key, relative to the table root ("_delta_log/…"),
// with the same naming rules the log reader uses.
func ClassifyLogKey(key string) LogKey {
	p := parseLogPath(key)
	if p.Kind == kindUnknown {
		return LogKey{}
	}
	return LogKey{Kind: p.Kind.String(), Version: p.Version}
}
