package deltalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/hostile"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob/memblob"
)

// HostileRow is one row of the hostile-input table (RELIABILITY.md): the
// case, the bound that held and what the Load returned.
type HostileRow struct {
	Case, Input, Bound, Result string
}

// runHostile loads one hostile case from a memblob bucket and checks its
// outcome, file and heap bound. It returns the row for the table.
func runHostile(t *testing.T, c hostile.Case) HostileRow {
	t.Helper()
	files, err := c.Build()
	if err != nil {
		t.Fatalf("building %s: %v", c.Name, err)
	}
	ctx := context.Background()
	mb := memblob.OpenBucket(nil)
	defer mb.Close()
	for k, v := range files {
		if err := mb.WriteAll(ctx, k, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	files = nil //nolint:ineffassign // let the built bytes go (the bucket holds them)
	tbl := NewTable(mb, "hostile/"+c.Name)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	snap, err := tbl.Load(ctx, LoadOptions{MaxLoadBytes: c.MaxLoadBytes})
	runtime.ReadMemStats(&after)
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	row := HostileRow{Case: c.Name, Input: c.Input, Bound: c.Bound}
	if c.MaxAlloc > 0 && alloc > c.MaxAlloc {
		t.Errorf("%s: the Load allocated %d bytes, more than the bound of %d", c.Name, alloc, c.MaxAlloc)
	}
	switch c.Want {
	case hostile.Loads:
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			return row
		}
		row.Result = fmt.Sprintf("loads version %d (%s allocated)", snap.Version, mibs(alloc))
		return row
	case hostile.Corrupt, hostile.Budget:
		want := ErrCorrupt
		if c.Want == hostile.Budget {
			want = ErrBudgetExceeded
		}
		var le *LogError
		if !errors.As(err, &le) || !errors.Is(err, want) {
			t.Errorf("%s: got %v (snapshot %v), want %v", c.Name, err, snap != nil, want)
			return row
		}
		if le.File != c.File || le.Table != "hostile/"+c.Name {
			t.Errorf("%s: error names table %q file %q, want %q: %v", c.Name, le.Table, le.File, c.File, err)
		}
		msg := le.Err.Error()
		if len(msg) > 160 {
			msg = msg[:160] + "…"
		}
		row.Result = fmt.Sprintf("%s naming %s: %s", sentinelName(want), baseName(le.File), msg)
		if c.MaxAlloc > 0 {
			row.Result += fmt.Sprintf(" (%s allocated)", mibs(alloc))
		}
	}
	return row
}

func sentinelName(err error) string {
	if err == ErrBudgetExceeded {
		return "ErrBudgetExceeded"
	}
	return "ErrCorrupt"
}

func mibs(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// hostileTable renders rows as a Markdown table.
func hostileTable(rows []HostileRow) string {
	var b strings.Builder
	b.WriteString("| case | input | bound | result |\n|---|---|---|---|\n")
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.Case, esc(r.Input), esc(r.Bound), esc(r.Result))
	}
	return b.String()
}

// corpusHostileCases break a real checkpoint of the corpus (table
// "checkpoint": a Spark checkpoint at 10, commits 11-14 without protocol or
// metaData) by patching its footer.
func corpusHostileCases(t *testing.T) []hostile.Case {
	const cpKey = "_delta_log/00000000000000000010.checkpoint.parquet"
	build := func(edit func([]byte) ([]byte, error)) func() (hostile.Table, error) {
		return func() (hostile.Table, error) {
			files := hostile.Table{}
			dir := filepath.Join(testcorpus.Dir(t), "checkpoint", "_delta_log")
			testcorpus.ReadTree(t, dir, func(key string, data []byte) error {
				files["_delta_log/"+key] = data
				return nil
			})
			cp, err := edit(files[cpKey])
			files[cpKey] = cp
			return files, err
		}
	}
	chunks := func(prefix string) func([]byte) ([]byte, error) {
		return func(cp []byte) ([]byte, error) {
			return hostile.EditChunks(cp, nil, func(cc *format.ColumnChunk, size int64) {
				if p := cc.MetaData.PathInSchema; len(p) > 0 && (prefix == "" || p[0] == prefix) {
					hostile.PastEOF(cc, size)
				}
			})
		}
	}
	c := func(name, input string, edit func([]byte) ([]byte, error)) hostile.Case {
		return hostile.Case{Name: name, Input: input, Bound: "nothing read from the file is used", Want: hostile.Corrupt, File: cpKey, Build: build(edit)}
	}
	return []hostile.Case{
		c("corpus-cp-metadata-chunks-past-eof", "corpus Spark checkpoint: every metaData chunk past the end of the file", chunks("metaData")),
		c("corpus-cp-every-chunk-past-eof", "corpus Spark checkpoint: every chunk past the end of the file", chunks("")),
		c("corpus-cp-values-mismatch", "corpus Spark checkpoint: protocol.minReaderVersion claims one value more than its pages hold",
			func(cp []byte) ([]byte, error) {
				return hostile.EditChunks(cp, []string{"protocol", "minReaderVersion"}, func(cc *format.ColumnChunk, _ int64) { cc.MetaData.NumValues++ })
			}),
	}
}

// TestHostileInputs loads every hostile table (internal/hostile): lying
// checkpoint footers and page headers, decompression bombs, strings that
// are not UTF-8, commits and hints far bigger than what is kept of them,
// and tables over their memory budget. Each ends in the error it must
// (naming the table and file), or loads, within its heap bound. With
// DELTASYNC_HOSTILE_TABLE=path it writes the table of outcomes there
// (Markdown, for RELIABILITY.md). Not parallel: the heap bound reads
// process-wide allocation counters.
func TestHostileInputs(t *testing.T) {
	var rows []HostileRow
	for _, c := range append(hostile.Cases(testing.Short()), corpusHostileCases(t)...) {
		t.Run(c.Name, func(t *testing.T) {
			rows = append(rows, runHostile(t, c))
		})
	}
	table := hostileTable(rows)
	t.Logf("hostile inputs:\n%s", table)
	if path := os.Getenv("DELTASYNC_HOSTILE_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
