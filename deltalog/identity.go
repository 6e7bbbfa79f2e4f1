package deltalog

import "encoding/binary"

// This file is how a snapshot knows that the log it continues is still the
// one it read. A table deleted and written again at the same path (the
// nightly "rm -rf and write again" refresh) reuses version numbers, so a
// version file that exists proves nothing: Refresh compares what the
// listing says of the newest commit the snapshot read with what it said
// then, and the metaData id of new commits with the snapshot's.

// fileStamp is what a listing says of one log file: enough to tell a file
// written again from the one read before, without any request of its own.
// 24 bytes, kept in every cached snapshot.
type fileStamp struct {
	size    int64  // bytes
	modTime int64  // ms since epoch, 0 when the store reports none
	tag     uint64 // contentTag of the store's content hash, 0 when none
}

// stampOf returns the listing's stamp of p.
func stampOf(p logPath) fileStamp {
	return fileStamp{size: p.Size, modTime: p.ModTime, tag: p.Tag}
}

// contentTag keeps the first 8 bytes of the content hash a store lists
// with each object (the MD5 that S3's ETag is for single-part uploads, GCS's
// and Azure's Content-MD5); 0 when there is none.
func contentTag(md5 []byte) uint64 {
	if len(md5) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(md5)
}

// sameLatest reports whether files (a listing that starts at s's version)
// still hold the newest commit s read, as it was then: same size,
// modification time and content hash. Without a stamp to compare (the
// latest version was read from a checkpoint whose commit is gone, or from
// a catalog-ratified staged commit, which is not listed) it is true, and
// Refresh decides from the versions alone. A commit that is gone is a
// difference too.
func (s *Snapshot) sameLatest(files []logPath) bool {
	if (s.state.latestKey == "" && !s.state.latestCommit) || s.state.staged || s.state.latest.size < 0 {
		return true
	}
	for _, p := range files {
		if s.isLatest(p) {
			return stampOf(p) == s.state.latest
		}
	}
	return false
}

// isLatest reports whether p is the newest commit s read: its key is
// latestKey, or with latestCommit the plain commit of s.Version.
func (s *Snapshot) isLatest(p logPath) bool {
	if s.state.latestCommit {
		return p.Kind == kindCommit && p.Version == s.Version
	}
	return p.Key == s.state.latestKey
}
