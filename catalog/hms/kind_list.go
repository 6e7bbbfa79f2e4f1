package hms

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	stdsync "sync"

	"github.com/deltasync/deltasync/catalog"
)

// List reads every table scope wants of every database scope may match,
// in batches (readBatches: two in flight), and hands each to emit in
// sorted order, a table that is not Delta with NotDelta saying why. A
// catalog scope names other than KindOptions.Name is not this
// metastore's: nothing is listed for it. A table scope does not want is
// not read and not emitted (the caller's Wants holds its selection, its
// shard and what its register rules may register). Errors of one database are
// joined, and the others are still listed; emit returning false stops the
// listing (nil).
func (k *Kind) List(ctx context.Context, scope catalog.Scope, emit func(catalog.Listed) bool) error {
	cats, all := scope.Catalogs()
	if !all && !slices.ContainsFunc(cats, func(c string) bool { return strings.EqualFold(c, k.name) }) {
		return nil
	}
	dbs, err := k.c.Databases(ctx)
	if err != nil {
		return fmt.Errorf("listing databases of %s: %w", k.name, err)
	}
	var errs []error
	for _, db := range dbs {
		if !scope.MayMatchSchema(k.name, db) {
			continue
		}
		names, err := k.c.TableNames(ctx, db)
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				errs = append(errs, fmt.Errorf("listing tables of %s.%s: %w", k.name, db, err))
			}
			continue
		}
		sort.Strings(names)
		var want []string
		for _, n := range names {
			if scope.Wants(catalog.TableName{Catalog: k.name, Schema: db, Table: n}) {
				want = append(want, n)
			}
		}
		err = k.readBatches(ctx, db, slices.Collect(slices.Chunk(want, listBatch)), func(chunk []string, got map[string]*Table) bool {
			for _, n := range chunk {
				t, ok := got[n]
				if !ok {
					continue // dropped since the listing
				}
				if !emit(listed(catalog.TableName{Catalog: k.name, Schema: db, Table: n}, t)) {
					return false
				}
			}
			return true
		})
		if errors.Is(err, errStopped) {
			return nil
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("reading tables of %s.%s: %w", k.name, db, err))
		}
	}
	return errors.Join(errs...)
}

// listed is a batch-read table as a listing entry: what the fast path
// compares between cycles (UpdatedAt, the record's fingerprint) and the
// table itself, which Load plans from without a request.
func listed(name catalog.TableName, t *Table) catalog.Listed {
	th := t.Thrift
	l := catalog.Listed{Name: name, Type: tableType(th), ID: tableID(name, th), Location: location(th),
		Comment: th.Parameters[KeyComment], UpdatedAt: fingerprint(th), Answer: t}
	if !IsDelta(th) {
		l.NotDelta = notDelta(th)
	}
	return l
}

// listBatch is how many tables a cycle reads per call: the client's
// default batch (HMS caps one at metastore.batch.retrieve.max, 300).
const listBatch = 100

// readsInFlight is how many of a database's batch reads the listing
// keeps outstanding. The steady cycle is those reads (the log checks
// overlap them); their cost is per table on the server, not per call, so
// a second read in flight hides one round trip's idle time behind
// another's work, and more are not reliably better (BENCHMARKS.md, "Hive
// Metastore: 10,000 tables" and "Two batch reads in flight": reads alone,
// 2 in flight 25-43% faster than 1; the steady cycle on HMS 4.0.1, 10,000
// tables, 7.17 s to 6.44 s on 2 shared cores; 4 in flight better than 2
// in half the runs, worse in the others).
const readsInFlight = 2

// errStopped is readBatches' answer when each asked it to stop.
var errStopped = errors.New("stopped")

// readBatches reads db's chunks with up to readsInFlight reads
// outstanding and hands each chunk's tables to each, in the chunks'
// order, until each returns false (errStopped) or a read fails (its
// error: the chunks before it were handed over, none after). Reads
// still outstanding when it returns are cancelled and waited for.
func (k *Kind) readBatches(ctx context.Context, db string, chunks [][]string, each func(chunk []string, got map[string]*Table) bool) error {
	type read struct {
		got map[string]*Table
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg stdsync.WaitGroup
	defer wg.Wait()
	defer cancel()
	reads := make([]chan read, len(chunks))
	next := 0 // the first chunk not yet asked for
	for i, chunk := range chunks {
		// Chunk i and up to readsInFlight-1 after it are asked for
		// before i's answer is waited for: while each handles chunk
		// i, the reads of the next ones are in flight.
		for ; next < len(chunks) && next < i+readsInFlight; next++ {
			c, names := make(chan read, 1), chunks[next]
			reads[next] = c
			wg.Go(func() {
				got, err := k.c.GetTables(ctx, db, names)
				c <- read{got, err}
			})
		}
		r := <-reads[i]
		reads[i] = nil
		if r.err != nil {
			return r.err
		}
		if !each(chunk, r.got) {
			return errStopped
		}
	}
	return nil
}
