package deltalog

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gocloud.dev/blob"
)

// The storage contract: every backend lists and reads a table's _delta_log
// the same way. One suite (runContract) runs over every store in
// contractStores (contract_stores_test.go); each store seeds real logs from
// ../shared/testdata/delta-logs under tables/<name>/ and opens the table the
// way a user would (Open URL + vended credentials where the backend has them).

// contractTables are the corpus tables seeded into every store: classic,
// multi-part and v2 checkpoints, compaction files, staged commits, sidecars.
var contractTables = []string{
	"checkpoint",
	"basic_catalog_managed",
	"checkpoint-v2-table",
	"multi-part-checkpoint",
	"compacted-log-files-table",
}

// contractStore is one storage backend under test.
type contractStore struct {
	// put writes one object at key (relative to the bucket root).
	put func(t *testing.T, key string, data []byte)
	// table returns a bucket rooted at root ("tables/<name>/").
	table func(t *testing.T, root string) *blob.Bucket
	// rec, when set, records the storage server's LIST requests.
	rec *listRecorder
	// hintParam is the LIST query parameter that carries the start-after
	// position on this backend ("" when the backend has none).
	hintParam string
	// check, when set, runs after the suite (e.g. credentials on the wire).
	check func(t *testing.T)
}

// corpusDir returns ../shared/testdata/delta-logs relative to the repo root.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(testcorpus.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// localEntry is what listLog should report for one _delta_log child.
type localEntry struct {
	Key   string
	Size  int64
	IsDir bool
}

// tableFiles returns every file of a corpus table, keyed relative to the
// table root, with its content.
func tableFiles(t testing.TB, tableDir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	testcorpus.ReadTree(t, tableDir, func(key string, data []byte) error {
		files[key] = data
		return nil
	})
	return files
}

// expectedLog is the sorted listing of _delta_log/ implied by files: files
// directly under it, and each non-empty subdirectory once (object stores
// have no empty directories).
func expectedLog(files map[string][]byte) []localEntry {
	seen := map[string]bool{}
	var out []localEntry
	for k, data := range files {
		rest, ok := strings.CutPrefix(k, logDir)
		if !ok {
			continue
		}
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			dir := logDir + rest[:i+1]
			if !seen[dir] {
				seen[dir] = true
				out = append(out, localEntry{Key: dir, IsDir: true})
			}
			continue
		}
		out = append(out, localEntry{Key: k, Size: int64(len(data))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func after(entries []localEntry, startAfter string) []localEntry {
	var out []localEntry
	for _, e := range entries {
		if e.Key > startAfter {
			out = append(out, e)
		}
	}
	return out
}

// startPoints picks the start-after keys to probe: none, the first commit,
// a middle one, the last one, and every checkpoint file.
func startPoints(entries []localEntry) []string {
	var commits, points []string
	for _, e := range entries {
		name := strings.TrimPrefix(e.Key, logDir)
		switch {
		case e.IsDir:
		case strings.Contains(name, ".checkpoint."):
			points = append(points, e.Key)
		case len(name) == 25 && strings.HasSuffix(name, ".json"):
			commits = append(commits, e.Key)
		}
	}
	points = append(points, "")
	if n := len(commits); n > 0 {
		points = append(points, commits[0], commits[n/2], commits[n-1])
	}
	return points
}

// listRecorder keeps the raw query of every LIST request a fake server saw.
type listRecorder struct {
	mu      sync.Mutex
	queries []string
}

func (r *listRecorder) wrap(isList func(*http.Request) bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if isList(req) {
			r.mu.Lock()
			r.queries = append(r.queries, req.URL.RawQuery)
			r.mu.Unlock()
		}
		h.ServeHTTP(w, req)
	})
}

func (r *listRecorder) reset() {
	r.mu.Lock()
	r.queries = nil
	r.mu.Unlock()
}

func (r *listRecorder) sawParam(param, value string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.queries {
		vals, err := url.ParseQuery(q)
		if err == nil && vals.Get(param) == value {
			return true
		}
	}
	return false
}

// TestStorageContract runs the contract over every backend.
func TestStorageContract(t *testing.T) {
	corpus := corpusDir(t)
	loaded := map[string]map[string]any{} // table -> store -> Load result
	for _, sc := range contractStores {
		t.Run(sc.name, func(t *testing.T) {
			store := sc.setup(t)
			for table, got := range runContract(t, store, corpus) {
				if loaded[table] == nil {
					loaded[table] = map[string]any{}
				}
				loaded[table][sc.name] = got
			}
		})
	}
	// Load gives the same snapshot on every backend.
	for _, table := range contractTables {
		if n := len(loaded[table]); n < 2 {
			t.Errorf("%s: loaded on %d backends, want at least 2 to compare", table, n)
		}
		var refStore string
		var ref any
		for _, sc := range contractStores {
			got, ok := loaded[table][sc.name]
			if !ok {
				continue
			}
			if refStore == "" {
				refStore, ref = sc.name, got
				continue
			}
			if diff := cmp.Diff(ref, got); diff != "" {
				t.Errorf("%s: Load on %s differs from %s (-%s +%s):\n%s", table, sc.name, refStore, refStore, sc.name, diff)
			}
		}
	}
}

// runContract seeds every contract table into store, checks listing and
// reading, and returns each table's Load result (see contractLoad).
func runContract(t *testing.T, store *contractStore, corpus string) map[string]any {
	loaded := map[string]any{}
	ctx := context.Background()
	for _, name := range contractTables {
		files := tableFiles(t, filepath.Join(corpus, name))
		root := "tables/" + name + "/"
		for k, data := range files {
			store.put(t, root+k, data)
		}
		// A sibling whose name extends the table's must never leak in.
		store.put(t, "tables/"+name+"-other/_delta_log/00000000000000000000.json", []byte("{}\n"))

		b := store.table(t, root)
		want := expectedLog(files)
		for _, sa := range startPoints(want) {
			t.Run(name+"/after="+strings.TrimPrefix(sa, logDir), func(t *testing.T) {
				if store.rec != nil {
					store.rec.reset()
				}
				got, err := listLog(ctx, b, sa)
				if err != nil {
					t.Fatalf("listLog: %v", err)
				}
				gotEntries := make([]localEntry, len(got))
				for i, o := range got {
					gotEntries[i] = localEntry{Key: o.Key, Size: o.Size, IsDir: o.IsDir}
				}
				if diff := cmp.Diff(after(want, sa), gotEntries, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("listLog(after %q) (-want +got):\n%s", sa, diff)
				}
				if sa != "" && store.rec != nil && store.hintParam != "" && !store.rec.sawParam(store.hintParam, root+sa) {
					t.Errorf("no LIST request carried %s=%s; saw %q", store.hintParam, root+sa, store.rec.queries)
				}
			})
		}
		t.Run(name+"/read", func(t *testing.T) {
			for _, e := range want {
				if e.IsDir {
					continue
				}
				got, err := readFile(ctx, b, e.Key)
				if err != nil {
					t.Fatalf("readFile(%s): %v", e.Key, err)
				}
				if string(got) != string(files[e.Key]) {
					t.Errorf("readFile(%s): %d bytes differ from the corpus file", e.Key, len(got))
				}
				if !strings.HasSuffix(e.Key, ".parquet") {
					continue
				}
				ra, size, err := newReaderAt(ctx, b, e.Key, -1)
				if err != nil || size != e.Size {
					t.Fatalf("newReaderAt(%s) = size %d, %v; want %d", e.Key, size, err, e.Size)
				}
				tail := make([]byte, 8)
				if _, err := ra.ReadAt(tail, size-8); err != nil || string(tail[4:]) != "PAR1" {
					t.Errorf("ReadAt(footer of %s) = %q, %v", e.Key, tail, err)
				}
			}
		})
		if got, ok := contractLoad(t, name, b); ok {
			loaded[name] = got
		}
	}
	if store.check != nil {
		store.check(t)
	}
	return loaded
}
