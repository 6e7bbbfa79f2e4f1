package deltalog

import (
	"context"
	"time"
)

// Credentials are storage credentials vended by the catalog (temporary
// table credentials). Only the fields for the table's cloud are used.
type Credentials struct {
	S3AccessKeyID     string
	S3SecretAccessKey string
	S3SessionToken    string
	AzureSASToken     string
	GCSOAuthToken     string
}

// Observer is called once per storage request made while reading a log.
// op is "list" or "get"; d is how long the request took; err is its error
// (nil on success). It is the hook for storage metrics. Calls made for one
// Table are serialized (unless it was given by WithConcurrentObserver); an
// observer shared by several Tables is called from their goroutines
// concurrently.
type Observer func(op string, d time.Duration, err error)

// Option configures a Table (see Open and NewTable).
type Option func(*options)

// options holds the settings applied by Option values.
type options struct {
	creds    Credentials
	observer Observer
	// concurrent is set by WithConcurrentObserver: observer needs no
	// serializing.
	concurrent bool
	// maxLoadBytes is the Table's memory budget per Load or Refresh
	// (WithMaxLoadBytes); 0 means DefaultMaxLoadBytes.
	maxLoadBytes int64
	// gates are the storage limits the Table shares (WithStorageGates);
	// nil means defaultGates.
	gates *StorageGates
	// pool bounds the bytes all the Loads of the Tables given it hold at
	// once (WithMemoryPool); nil: none.
	pool *MemoryPool
	// listBounds are ListDirs' bounds; zero fields mean the defaults
	// (listDirsBounds). Tests set them smaller.
	listBounds listDirsBounds
}

// applyOptions folds opts into a fresh options value.
func applyOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithObserver reports every storage request (op "list" or "get") with its
// duration and error to obs; it is the hook for storage metrics.
func WithObserver(obs Observer) Option {
	return func(o *options) { o.observer, o.concurrent = obs, false }
}

// WithConcurrentObserver is WithObserver for an observer that is safe for
// concurrent use (Prometheus collectors are): it is called from a Table's
// concurrent fetches as they finish, and the Table keeps no lock and no
// wrapper of its own for it, which a process holding tens of thousands of
// open Tables pays for once each.
func WithConcurrentObserver(obs Observer) Option {
	return func(o *options) { o.observer, o.concurrent = obs, true }
}

// WithMaxLoadBytes sets the memory budget of every Load and Refresh of the
// Table whose LoadOptions.MaxLoadBytes is 0: the most bytes of the log one
// of them may hold at once (see LoadOptions.MaxLoadBytes). n <= 0 leaves
// DefaultMaxLoadBytes. It is how a daemon applies one configured budget to
// every table it opens.
func WithMaxLoadBytes(n int64) Option {
	return func(o *options) { o.maxLoadBytes = max(n, 0) }
}

// WithStorageGates makes an object-store Table take its requests through
// gates: their process and per-bucket in-flight limits and the bucket's
// shared throttling backoff. Every Table of a process should get the same
// StorageGates; without the option a Table uses ones with the default
// limits, shared by every such Table.
func WithStorageGates(g *StorageGates) Option {
	return func(o *options) { o.gates = g }
}

// WithMemoryPool makes every Load and Refresh of the Table reserve the
// bytes it charges to its budget from p too: p bounds what all the log
// reads given it hold at once (see MemoryPool). Every Table of a process
// should get the same pool; without the option a Table's reads are
// bounded by their own budgets only.
func WithMemoryPool(p *MemoryPool) Option {
	return func(o *options) { o.pool = p }
}

// loadBudget is the budget of a Load or Refresh given opts: its own
// MaxLoadBytes, else the Table's, else the default; with the Table's
// pool, as a share of it that waits on ctx. The caller closes it when the
// Load ends.
func (o *options) loadBudget(ctx context.Context, opts LoadOptions) *budget {
	n := o.maxLoadBytes
	if opts.MaxLoadBytes != 0 {
		n = opts.MaxLoadBytes
	}
	b := newBudget(n)
	b.pool = o.pool.claim(ctx)
	return b
}

// observe reports one storage request to the observer, if any.
func (o *options) observe(op string, start time.Time, err error) {
	if o.observer != nil {
		o.observer(op, time.Since(start), err)
	}
}
