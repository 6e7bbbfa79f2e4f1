package sparkprops

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The parameters besides Spark's schema keys that a metastore record of a
// Delta table carries and deltasync writes (the Hive Metastore's and
// Glue's alike): the comment, the version keys of Delta's own
// catalog-update hook (DeltaConfig), the log's properties, deltasync's
// list of the properties outside delta.* it wrote, and Trino's optional
// cache, which a write to another version makes stale.
const (
	KeyComment             = "comment"
	KeyLastUpdateVersion   = "delta.lastUpdateVersion"
	KeyLastCommitTimestamp = "delta.lastCommitTimestamp"
	// KeySyncedProperties is deltasync's own: a JSON array of the log
	// properties outside the delta.* namespace it last wrote, so a property
	// removed from the log is removed here too, while a parameter another
	// client set (and the log never had) is never touched.
	KeySyncedProperties = "deltasync.syncedProperties"
	// Trino's optional cache of a Delta table's columns and comment
	// (DeltaLakeTableMetadataScheduler), valid only while
	// trino_last_transaction_version is the log's version.
	KeyTrinoVersion = "trino_last_transaction_version"
	KeyTrinoSchema  = "trino_metadata_schema_string"
)

// Owned is what deltasync keeps in a record's parameters besides the
// schema: the comment, the watermark and the log's properties.
type Owned struct {
	Comment    string
	HasComment bool
	// Version and CommitTimestamp are the version keys (ms); ReadOwned
	// gives -1 for one that is absent.
	Version, CommitTimestamp int64
	// Properties are the log properties the record holds: every delta.*
	// parameter and the ones KeySyncedProperties names, but none that
	// reserved reports.
	Properties map[string]string
}

// ReadOwned reads what deltasync keeps in params. reserved reports the
// kind's keys that are never a log property. A version key that is not a
// non-negative integer, or a KeySyncedProperties that is not a JSON array
// of keys, is an error naming the parameter.
func ReadOwned(params map[string]string, reserved func(string) bool) (Owned, error) {
	o := Owned{Version: -1, CommitTimestamp: -1}
	o.Comment, o.HasComment = params[KeyComment]
	for _, k := range []struct {
		key string
		dst *int64
	}{{KeyLastUpdateVersion, &o.Version}, {KeyLastCommitTimestamp, &o.CommitTimestamp}} {
		if v, ok := params[k.key]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return Owned{}, fmt.Errorf("parameter %s = %q: want a non-negative integer", k.key, v)
			}
			*k.dst = n
		}
	}
	synced, err := SyncedProperties(params)
	if err != nil {
		return Owned{}, err
	}
	o.Properties = map[string]string{}
	for k, v := range params {
		if (strings.HasPrefix(k, "delta.") || slices.Contains(synced, k)) && !reserved(k) {
			o.Properties[k] = v
		}
	}
	return o, nil
}

// SyncedProperties are the keys KeySyncedProperties names (nil when it is
// absent).
func SyncedProperties(params map[string]string) ([]string, error) {
	v, ok := params[KeySyncedProperties]
	if !ok {
		return nil, nil
	}
	var keys []string
	if err := json.Unmarshal([]byte(v), &keys); err != nil {
		return nil, fmt.Errorf("parameter %s = %q: want a JSON array of keys: %w", KeySyncedProperties, v, err)
	}
	return keys, nil
}

// SetOwned writes o into params, which already holds none of the
// properties deltasync wrote before (the caller removed them): the
// comment (removed when empty), the properties and KeySyncedProperties
// naming those outside delta.*, the version keys, and Trino's cache
// dropped unless it is of this version.
func SetOwned(params map[string]string, o Owned) {
	if o.Comment != "" {
		params[KeyComment] = o.Comment
	} else {
		delete(params, KeyComment)
	}
	var own []string
	for k, v := range o.Properties {
		params[k] = v
		if !strings.HasPrefix(k, "delta.") {
			own = append(own, k)
		}
	}
	if len(own) > 0 {
		slices.Sort(own)
		b, _ := json.Marshal(own)
		params[KeySyncedProperties] = string(b)
	} else {
		delete(params, KeySyncedProperties)
	}
	version := strconv.FormatInt(o.Version, 10)
	params[KeyLastUpdateVersion] = version
	params[KeyLastCommitTimestamp] = strconv.FormatInt(o.CommitTimestamp, 10)
	if params[KeyTrinoVersion] != version {
		delete(params, KeyTrinoVersion)
		delete(params, KeyTrinoSchema)
	}
}
