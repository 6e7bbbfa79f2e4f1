package deltalog

import (
	"context"
	"testing"

	"gocloud.dev/blob/memblob"
)

// TestCompactKeepsNoLatestKey: a compact snapshot whose newest commit is
// the plain commit of its version keeps no key string for it (the
// listing's key was a substring of the store's whole key, prefix and all,
// kept per table for as long as the snapshot), and still finds that commit
// in a listing: TestRefreshSeesLogWrittenAgain checks that a rewrite is
// still seen from a compact snapshot.
func TestCompactKeepsNoLatestKey(t *testing.T) {
	ctx := context.Background()
	mb := memblob.OpenBucket(nil)
	defer mb.Close()
	put(t, mb, commitKey(0), identityV0(100, "a", "x"))
	put(t, mb, commitKey(1), commitText(110, addLine))
	b := NewTable(mb, "t")
	snap, err := b.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.state.latestKey != commitKey(1) {
		t.Fatalf("loaded snapshot's latest key %q, want %q", snap.state.latestKey, commitKey(1))
	}
	c := snap.Compact()
	if c.state.latestKey != "" || !c.state.latestCommit {
		t.Errorf("compact snapshot keeps latest key %q (latestCommit %v), want none and latestCommit", c.state.latestKey, c.state.latestCommit)
	}
	files, err := b.list(ctx, versionPrefixKey(c.Version))
	if err != nil {
		t.Fatal(err)
	}
	if !c.sameLatest(files) || !snap.sameLatest(files) {
		t.Errorf("the listing %v no longer holds the newest commit, as the compact snapshot sees it", files)
	}
	var other []logPath
	for _, f := range files {
		if f.Kind == kindCommit {
			f.Size++
		}
		other = append(other, f)
	}
	if c.sameLatest(other) {
		t.Error("a newest commit of another size is the same, as the compact snapshot sees it")
	}
	if c.sameLatest(nil) {
		t.Error("a listing without the newest commit holds it, as the compact snapshot sees it")
	}
}
