package deltalog

import (
	"context"
	"encoding/json"
	"errors"
)

// replay accumulates protocol, metaData and domains while files are read
// newest first; the first action of each kind seen is the current one.
type replay struct {
	protocol    *Protocol
	rawProtocol json.RawMessage
	metadata    *Metadata
	rawMetadata json.RawMessage
	domains     map[string]string // live domains
	seen        map[string]bool   // domains decided (set or removed) by a newer file
	newest      *fileActions      // actions of the newest file read (commit info)
	newestFile  *logPath
	// protocolFile and metadataFile name where the actions were found
	// (for errors); "" when carried over from a previous snapshot.
	protocolFile, metadataFile string
}

// wantDomains reports whether domainMetadata actions must still be
// collected: the protocol is unknown yet or has the domainMetadata feature.
func (r *replay) wantDomains() bool {
	return r.protocol == nil || r.protocol.hasWriterFeature("domainMetadata")
}

// done reports whether replay can stop: both actions found and no
// domains to collect.
func (r *replay) done() bool {
	return r.protocol != nil && r.metadata != nil && !r.protocol.hasWriterFeature("domainMetadata")
}

// apply folds the actions of one file, older than every file applied so far.
func (r *replay) apply(p *logPath, fa *fileActions) {
	if r.newest == nil {
		r.newest, r.newestFile = fa, p
	}
	if r.protocol == nil && fa.protocol != nil {
		r.protocol, r.rawProtocol, r.protocolFile = fa.protocol, fa.rawProtocol, p.Key
	}
	if r.metadata == nil && fa.metadata != nil {
		r.metadata, r.rawMetadata, r.metadataFile = fa.metadata, fa.rawMetadata, p.Key
	}
	// Within one file the last action for a domain wins.
	for i := len(fa.domains) - 1; i >= 0; i-- {
		d := fa.domains[i]
		if r.seen == nil {
			r.seen, r.domains = map[string]bool{}, map[string]string{}
		}
		if r.seen[d.Domain] {
			continue
		}
		r.seen[d.Domain] = true
		if !d.Removed {
			r.domains[d.Domain] = d.Configuration
		}
	}
}

// run reads files (newest first) until done. Each file is one GET for
// JSON, a few ranged GETs for the projected columns of Parquet.
func (t *Table) run(ctx context.Context, r *replay, files []logPath) *LogError {
	for i := range files {
		if r.done() {
			return nil
		}
		p := &files[i]
		fa, err := t.readActions(ctx, p, r.wantDomains())
		if err != nil {
			return err
		}
		r.apply(p, fa)
	}
	return nil
}

// readActions reads one log file's protocol/metaData/commitInfo/domain actions.
func (t *Table) readActions(ctx context.Context, p *logPath, wantDomains bool) (*fileActions, *LogError) {
	if p.Parquet {
		ra, size, err := newReaderAt(ctx, t.bucket, p.Key, p.Size)
		if err != nil {
			return nil, fileErr(p.Version, p.Key, 0, err)
		}
		fa, err := readParquetActions(newBlockReaderAt(ra, size, checkpointBlockSize), size, wantDomains)
		if err != nil {
			return nil, fileErr(p.Version, p.Key, 0, err)
		}
		return fa, nil
	}
	data, err := readFile(ctx, t.bucket, p.Key)
	if err != nil {
		return nil, fileErr(p.Version, p.Key, 0, err)
	}
	fa, err := parseActions(data)
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return nil, fileErr(p.Version, p.Key, le.Line, le.Err)
		}
		return nil, fileErr(p.Version, p.Key, 0, err)
	}
	return fa, nil
}

// commitTimestamp picks the timestamp of the newest file read: the
// in-commit timestamp when ict is enabled and present, else
// commitInfo.timestamp, else the file's modification time.
func commitTimestamp(r *replay, md *Metadata) int64 {
	fa, p := r.newest, r.newestFile
	if fa == nil || p == nil {
		return 0
	}
	if fa.ict != nil && md != nil && md.Configuration["delta.enableInCommitTimestamps"] == "true" {
		return *fa.ict
	}
	if fa.timestamp != nil {
		return *fa.timestamp
	}
	return p.ModTime
}
