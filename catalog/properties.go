package catalog

import (
	"encoding/json"
	"maps"
	"path"
)

// IgnoredProperty reports whether key matches one of globs (path.Match,
// or the key itself): a property diff.ignore_properties leaves out of
// every comparison and every write.
func IgnoredProperty(key string, globs []string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, key); ok || g == key {
			return true
		}
	}
	return false
}

// LogProperties are the table properties the log calls for in a record
// that keeps the log's state in its properties (the Hive Metastore's and
// Glue's): the log's configuration, the protocol's projection
// (ProtocolProperties) and the clustering columns. A write leaves the keys
// diff.ignore_properties matches as stored (DropIgnored, KeepIgnored).
func LogProperties(log LogState) map[string]string {
	props := map[string]string{}
	maps.Copy(props, log.Configuration)
	maps.Copy(props, ProtocolProperties(log.Protocol))
	if log.Clustering != nil {
		b, _ := json.Marshal(log.Clustering)
		props[PropClusteringColumns] = string(b)
	}
	return props
}

// DropIgnored deletes from props the keys ignore matches.
func DropIgnored(props map[string]string, ignore []string) {
	maps.DeleteFunc(props, func(k, _ string) bool { return IgnoredProperty(k, ignore) })
}

// KeepIgnored makes next, a record's properties as a write would leave
// them, hold every key ignore matches as stored held it: its stored value,
// or absent when stored had none.
func KeepIgnored(stored, next map[string]string, ignore []string) {
	for k, v := range stored {
		if IgnoredProperty(k, ignore) {
			next[k] = v
		}
	}
	maps.DeleteFunc(next, func(k, _ string) bool {
		_, was := stored[k]
		return !was && IgnoredProperty(k, ignore)
	})
}
