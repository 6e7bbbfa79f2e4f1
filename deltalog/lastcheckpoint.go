package deltalog

import (
	"bytes"
	"encoding/json"
)

// lastCheckpoint is the part of _delta_log/_last_checkpoint that deltalog
// uses. The file is only a hint for where to start listing: it may be
// missing, empty, stale or point at a checkpoint that was deleted, so the
// listing always has the last word.
type lastCheckpoint struct {
	Version int64 // checkpoint version
	Parts   int   // number of parts of a multi-part checkpoint, 0 if not
}

// parseLastCheckpoint parses the content of _last_checkpoint. Unknown and
// snake_case fields (size_in_bytes, ...) are tolerated. ok is false when the
// content gives no usable version (empty, not JSON, missing or negative
// version); the caller then lists the whole log.
func parseLastCheckpoint(data []byte) (lastCheckpoint, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return lastCheckpoint{}, false
	}
	var raw struct {
		Version *json.Number `json:"version"`
		Parts   *json.Number `json:"parts"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw.Version == nil {
		return lastCheckpoint{}, false
	}
	v, err := raw.Version.Int64()
	if err != nil || v < 0 {
		return lastCheckpoint{}, false
	}
	lc := lastCheckpoint{Version: v}
	if raw.Parts != nil {
		if n, err := raw.Parts.Int64(); err == nil && n > 0 && n < 1<<20 {
			lc.Parts = int(n)
		}
	}
	return lc, true
}
