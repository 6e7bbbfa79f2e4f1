package sync

import (
	"context"

	"github.com/deltasync/deltasync/catalog"
)

// DefaultReadConcurrency is the default of Options.ReadConcurrency: how
// many tables a cycle reads in full at once. A full read is 3–6 storage
// round trips (LIST, _last_checkpoint, checkpoint, commits), so on an
// object store it waits far more than it computes: with only Concurrency
// (4) tables read at once, a first cycle over 10,000 S3 tables at 20 ms
// per request took 313 s (BenchmarkScaleS3), although the storage limits
// allowed 64 requests per bucket in flight. The catalog's share of a
// reconcile is bounded apart, by Concurrency turns (catalogTurns).
const DefaultReadConcurrency = 32

// defaultConcurrency is the default of Options.Concurrency.
const defaultConcurrency = 4

// ResolveReadConcurrency is how many tables a Reconciler made with
// Options.ReadConcurrency read and Options.Concurrency concurrency reads
// in full at once: read, DefaultReadConcurrency when read is 0 or less,
// never below concurrency (itself 4 when 0 or less). New resolves its
// options with it; whatever shares the reconciler's full-read slots (the
// events' reconciles) sizes itself with it, so the two cannot disagree.
func ResolveReadConcurrency(read, concurrency int) int {
	if concurrency <= 0 {
		concurrency = defaultConcurrency
	}
	if read <= 0 {
		read = DefaultReadConcurrency
	}
	return max(read, concurrency)
}

// catalogTurns bounds the catalog requests of full reconciles: a
// reconcile takes a turn for each call it makes to the catalog (load,
// write, the write's follow-ups, vended credentials) and gives it back
// before it reads storage, so up to ReadConcurrency tables read their logs
// at once while at most Concurrency of them talk to the catalog — the
// load `concurrency` has always put on it.
type catalogTurns chan struct{}

// take waits for a turn; the error is the context's.
func (t catalogTurns) take(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t catalogTurns) give() { <-t }

// turnKind is the catalog's kind with its reconcile calls (Load, Send)
// each taking a turn. The calls of registration (sync/register) and the listing
// (discover) are not turned: they are bounded by their own settings.
type turnKind struct {
	catalog.Kind
	turns catalogTurns
}

func (k turnKind) Load(ctx context.Context, name catalog.TableName, from *catalog.Listed) (*catalog.Read, error) {
	if err := k.turns.take(ctx); err != nil {
		return nil, err
	}
	defer k.turns.give()
	return k.Kind.Load(ctx, name, from)
}

func (k turnKind) Send(ctx context.Context, w *catalog.Write) (catalog.Sent, error) {
	if err := k.turns.take(ctx); err != nil {
		return catalog.Sent{}, err
	}
	defer k.turns.give()
	return k.Kind.Send(ctx, w)
}
