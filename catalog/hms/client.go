package hms

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	stdsync "sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	hm "github.com/beltran/gohive/hive_metastore"
)

// DefaultCatalog is HMS's own default catalog (HMS 3+ name tables
// catalog.db.table; every pre-3 table lives in "hive").
const DefaultCatalog = "hive"

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// Catalog is the HMS catalog the tables live in (DefaultCatalog).
	Catalog string
	// Timeout bounds each call (dial included) when the caller's context
	// has no earlier deadline (30s). A server that stops answering costs at
	// most this, never a hang.
	Timeout time.Duration
	// MaxIdle is how many connections are kept for reuse (4). A Thrift
	// connection carries one call at a time; calls beyond it dial more.
	MaxIdle int
	// User and Hostname go into lock requests (the process's user and host).
	User, Hostname string
	// BatchSize is how many tables one get_table_objects_by_name_req asks
	// for (100; HMS caps a batch at metastore.batch.retrieve.max, 300).
	BatchSize int
	// Observer, when set, is called after every Thrift call with its name
	// (get_table_req, alter_table_with_environment_context, lock, ...),
	// its duration and its error (nil on success): the seam for metrics.
	Observer func(op string, d time.Duration, err error)
}

// Client talks to one Hive Metastore over unframed binary Thrift (HMS's
// default transport, no SASL). It is safe for concurrent use: each call
// takes a connection of its own from a small pool and puts it back when the
// reply was read whole.
type Client struct {
	addr string
	opts Options
	dial net.Dialer

	mu      stdsync.Mutex
	idle    []*conn
	closed  bool
	version string
}

// conn is one Thrift connection and the generated client bound to it.
type conn struct {
	nc  net.Conn
	rec *skipRecorder
	wr  *fieldFilter
	ms  *hm.ThriftHiveMetastoreClient
}

// New returns a Client for uri, thrift://host:port. It does not dial:
// the first call does.
func New(uri string, opts Options) (*Client, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "thrift" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("hms: metastore URL %q: want thrift://host:port", uri)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "9083")
	}
	if opts.Catalog == "" {
		opts.Catalog = DefaultCatalog
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxIdle <= 0 {
		opts.MaxIdle = 4
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 100
	}
	if opts.User == "" {
		opts.User = os.Getenv("USER")
		if opts.User == "" {
			opts.User = "deltasync"
		}
	}
	if opts.Hostname == "" {
		opts.Hostname, _ = os.Hostname()
	}
	return &Client{addr: host, opts: opts}, nil
}

// Catalog is the HMS catalog this client names tables in.
func (c *Client) Catalog() string { return c.opts.Catalog }

// Close closes the idle connections; calls in flight close theirs when done.
func (c *Client) Close() error {
	c.mu.Lock()
	idle := c.idle
	c.idle, c.closed = nil, true
	c.mu.Unlock()
	for _, cn := range idle {
		_ = cn.nc.Close()
	}
	return nil
}

func (c *Client) get(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cn, nil
	}
	c.mu.Unlock()
	nc, err := c.dial.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, err
	}
	// Deadlines are this client's (per call, from ctx), so the transport is
	// a plain stream: thrift's TSocket would reset them on every read.
	trans := thrift.NewStreamTransportRW(nc)
	cfg := &thrift.TConfiguration{MaxMessageSize: maxThriftSize}
	rec := &skipRecorder{TProtocol: thrift.NewTBinaryProtocolConf(trans, cfg)}
	wr := &fieldFilter{TProtocol: thrift.NewTBinaryProtocolConf(trans, cfg)}
	return &conn{nc: nc, rec: rec, wr: wr, ms: hm.NewThriftHiveMetastoreClient(thrift.NewTStandardClient(rec, wr))}, nil
}

// maxThriftSize bounds each string and container of a reply (thrift
// checks a container's claimed length times its smallest element's size
// against it): 16 MiB, where thrift's default is 100 MB. The generated code
// allocates a list or map at its claimed length before reading an
// element, so a reply claiming a huge list cost that much memory at once
// (a list of 25 million names claimed in 5 bytes: ~400 MB of string
// headers). No reply HMS sends carries a string or a container near it:
// a Spark schema is split into 4,000-character parts, a batch read holds
// 100 tables, and a database of a million tables lists its names as a
// container of 4 MB by this count (a million strings of 4 bytes at
// least); one of over four million tables would be refused, naming the
// call.
const maxThriftSize = 16 << 20

func (c *Client) put(cn *conn) {
	c.mu.Lock()
	if !c.closed && len(c.idle) < c.opts.MaxIdle {
		c.idle = append(c.idle, cn)
		cn = nil
	}
	c.mu.Unlock()
	if cn != nil {
		_ = cn.nc.Close()
	}
}

// call runs one Thrift call on a pooled connection under a deadline (the
// earlier of ctx's and now+Timeout; ctx's cancellation interrupts it too),
// and returns the fields the reply's decoding skipped. A connection whose
// call failed below the IDL (timeout, reset, garbled reply) is closed.
func (c *Client) call(ctx context.Context, op, table string, f func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error) (skipped []string, err error) {
	r, err := c.callWith(ctx, op, table, writeFilter{}, f)
	return r.skipped, err
}

// writeFilter configures a call's fieldFilter: the Table's field id in
// the call's arguments (root) and the fields inside it to leave out when
// still zero (omit; nil: none).
type writeFilter struct {
	root string
	omit func(path string) bool
}

// reply is what the reading protocol recorded of a call's reply.
type reply struct {
	skipped []string          // fields the generated code skipped
	present map[string]uint64 // struct path → field ids present
}

// callWith is call with the alter's write filter, returning what the
// reading protocol recorded.
func (c *Client) callWith(ctx context.Context, op, table string, wf writeFilter, f func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error) (r reply, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if c.opts.Observer != nil {
		start := time.Now()
		defer func() { c.opts.Observer(op, time.Since(start), err) }()
	}
	cn, err := c.get(ctx)
	if err != nil {
		return r, &Error{Op: op, Table: table, Err: fmt.Errorf("connect %s: %w", c.addr, ctxErr(ctx, err))}
	}
	dl, _ := ctx.Deadline()
	_ = cn.nc.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { _ = cn.nc.SetDeadline(time.Unix(1, 0)) })
	cn.rec.reset()
	cn.wr.set(wf.root, wf.omit)
	err = f(ctx, cn.ms)
	cn.wr.set("", nil)
	interrupted := !stop()
	r = reply{skipped: cn.rec.skipped, present: cn.rec.present}
	if interrupted || !healthy(err) {
		_ = cn.nc.Close()
		if err == nil {
			err = ctx.Err()
		}
	} else {
		_ = cn.nc.SetDeadline(time.Time{})
		c.put(cn)
	}
	if err != nil {
		return r, &Error{Op: op, Table: table, Err: classify(ctxErr(ctx, err))}
	}
	return r, nil
}

// ctxErr names the deadline or cancellation behind a network error.
func ctxErr(ctx context.Context, err error) error {
	if ce := ctx.Err(); ce != nil && !errors.Is(err, ce) {
		return fmt.Errorf("%w (%v)", ce, err)
	}
	return err
}

// name spells a table for errors and logs: catalog.db.table.
func (c *Client) name(db, table string) string {
	if table == "" {
		return c.opts.Catalog + "." + db
	}
	return c.opts.Catalog + "." + db + "." + table
}

// Version is the server's getVersion ("4.0.1"; HMS 3.1.x answers "3.0"),
// asked once and remembered.
func (c *Client) Version(ctx context.Context) (string, error) {
	c.mu.Lock()
	v := c.version
	c.mu.Unlock()
	if v != "" {
		return v, nil
	}
	_, err := c.call(ctx, "getVersion", "", func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		var err error
		v, err = ms.GetVersion(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
	return v, nil
}

// HasExpectedParameterGuard reports whether the server honours the alter's
// expected_parameter_key/value guard: HMS 4.0 and later. HMS 3.x ignores
// it silently (a stale write wins), so there the table lock is the guard.
func (c *Client) HasExpectedParameterGuard(ctx context.Context) (bool, error) {
	v, err := c.Version(ctx)
	if err != nil {
		return false, err
	}
	major, _, _ := strings.Cut(v, ".")
	switch major {
	case "0", "1", "2", "3":
		return false, nil
	}
	return true, nil
}
