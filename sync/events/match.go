package events

import (
	"strings"

	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/location"
)

// LogObject is an object event read as a Delta log file: the table root it
// is under (canonical), and what the file is.
type LogObject struct {
	Root string
	File deltalog.LogKey
}

// Triggers reports whether a new file of this kind names a table to
// reconcile: a commit, any checkpoint, _last_checkpoint or a staged commit.
// Checksums, compactions and unknown files in _delta_log do not.
func (o LogObject) Triggers() bool {
	switch o.File.Kind {
	case "commit", "checkpoint", "multi-part checkpoint", "v2 checkpoint", "_last_checkpoint", "staged commit":
		return true
	}
	return false
}

// logObjectOf splits an object event into the table root and the log file;
// ok is false when the object is not under a _delta_log directory.
func logObjectOf(e ObjectEvent) (LogObject, bool) {
	const dir = "_delta_log/"
	var root, rest string
	if strings.HasPrefix(e.Key, dir) {
		root, rest = e.Store, e.Key
	} else if i := strings.Index(e.Key, "/"+dir); i >= 0 {
		root, rest = e.Store+"/"+e.Key[:i], e.Key[i+1:]
	} else {
		return LogObject{}, false
	}
	return LogObject{Root: location.ObjectRoot(root), File: deltalog.ClassifyLogKey(rest)}, true
}
