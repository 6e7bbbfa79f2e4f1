// Package fakehms is an in-process Hive Metastore for tests (sync's and
// cmd's): real Thrift over gohive's generated processor, for the few calls
// deltasync makes. It also holds the test tools for real metastores:
// HoldProxy (holds a chosen call until released), RawTable (a record read
// with no generated struct, field id by field id) and CreateTableUnset (a
// record created with fields left null, as a Java client does).
package fakehms

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	hm "github.com/beltran/gohive/hive_metastore"
)

// Server is an in-process Hive Metastore speaking real Thrift (gohive's
// generated processor) for the few calls deltasync makes, with HMS's
// semantics where a sync depends on them: getVersion ("4.0.1" or "3.0"),
// the alter's expected_parameter_key/value guard (HMS 4 only; HMS 3
// ignores it, as the real 3.1.3 does), transient_lastDdlTime set by the
// server on an alter that omits it, EXCLUSIVE table locks. Calls are
// counted by name. It is for deterministic bounds (calls per table) and
// races staged between a read and a write; the contract with the real
// servers is the real-HMS tests'.
type Server struct {
	hm.ThriftHiveMetastore // nil: a call not implemented here panics the handler

	version string
	mu      gosync.Mutex
	dbs     map[string]map[string]*hm.Table
	calls   map[string]int
	locks   map[string]int64   // db.table → lock id
	waiting map[string][]int64 // db.table → lock ids waiting, in order
	nextID  int64
	clock   int64 // seconds; every server-set transient_lastDdlTime is a tick
	// BeforeAlter, when set, runs (without the lock) before an alter is
	// checked: another writer's edit landing between deltasync's read
	// and its write.
	BeforeAlter func(db, table string)
	// BeforeCreate, when set, runs (without the lock) before a
	// create_table is checked.
	BeforeCreate func(db, table string)
	dbLocs       map[string]string // database → location (CreateDatabase)
	// BeforeGetTables, when set, runs (without the lock) as a
	// get_table_objects_by_name_req arrives, before it is answered: a
	// slow server, a test watching how many are in flight at once, or
	// (returning an error) a read the server fails, answered as a
	// MetaException.
	BeforeGetTables func(db string, names []string) error
	// URL is thrift://127.0.0.1:PORT.
	URL string

	conns    gosync.Mutex
	open     map[*conn]bool // the connections accepted and not yet closed
	accepted int
}

// New starts a fake playing version ("4.0.1" or "3.0") on 127.0.0.1,
// stopped when t ends.
func New(t testing.TB, version string) *Server {
	t.Helper()
	f := &Server{version: version, dbs: map[string]map[string]*hm.Table{}, calls: map[string]int{}, locks: map[string]int64{}, waiting: map[string][]int64{}, clock: 1_800_000_000}
	sock, err := thrift.NewTServerSocket("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Listen(); err != nil {
		t.Fatal(err)
	}
	f.URL = "thrift://" + sock.Addr().String()
	f.open = map[*conn]bool{}
	srv := thrift.NewTSimpleServer4(hm.NewThriftHiveMetastoreProcessor(f), &listener{TServerSocket: sock, f: f}, thrift.NewTTransportFactory(), thrift.NewTBinaryProtocolFactoryConf(nil))
	srv.SetLogContext(context.Background()) // unset, thrift dereferences nil logging a connection's error
	go func() { _ = srv.AcceptLoop() }()
	t.Cleanup(func() {
		// Stop waits for every connection's goroutine, and one blocks
		// reading until its client closes: a client that leaked its
		// connection would hold Stop until the garbage collector closed
		// it (up to the runtime's 2-minute forced collection). OpenConns
		// is how a test asserts none leaked; here they are closed first.
		f.conns.Lock()
		open := slices.Collect(maps.Keys(f.open))
		f.conns.Unlock()
		for _, c := range open {
			c.shut.Store(true)
			_ = c.Close()
		}
		_ = srv.Stop()
	})
	return f
}

// listener is the server socket, counting the connections it accepts
// until they close.
type listener struct {
	*thrift.TServerSocket
	f *Server
}

func (l *listener) Accept() (thrift.TTransport, error) {
	t, err := l.TServerSocket.Accept()
	if err != nil || t == nil {
		return t, err
	}
	c := &conn{TTransport: t, f: l.f}
	l.f.conns.Lock()
	l.f.open[c] = true
	l.f.accepted++
	l.f.conns.Unlock()
	return c, nil
}

// conn is an accepted connection; the server closes it when its client
// has closed (the read ends), or at the test's end.
type conn struct {
	thrift.TTransport
	f    *Server
	shut atomic.Bool // closed by the server's cleanup: its read ends as at EOF
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.TTransport.Read(p)
	if err != nil && c.shut.Load() {
		return n, io.EOF
	}
	return n, err
}

func (c *conn) Close() error {
	c.f.conns.Lock()
	delete(c.f.open, c)
	c.f.conns.Unlock()
	return c.TTransport.Close()
}

// OpenConns is how many connections the server has accepted and not yet
// seen closed, and how many it has accepted in all. A client's close is
// seen when the server's read of it ends, just after the client's Close
// returns: a test polls (WaitConnsClosed).
func (f *Server) OpenConns() (open, accepted int) {
	f.conns.Lock()
	defer f.conns.Unlock()
	return len(f.open), f.accepted
}

// WaitConnsClosed fails t unless every accepted connection is seen closed
// within wait (polling), and returns how many were accepted in all.
func (f *Server) WaitConnsClosed(t testing.TB, wait time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		open, accepted := f.OpenConns()
		if open == 0 {
			return accepted
		}
		if time.Now().After(deadline) {
			t.Errorf("%d of the %d connections accepted still open after %s: a client did not close them", open, accepted, wait)
			return accepted
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *Server) count(op string) {
	f.mu.Lock()
	f.calls[op]++
	f.mu.Unlock()
}

// Calls returns the calls counted since the last reset, and resets them.
func (f *Server) Calls() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = map[string]int{}
	return c
}

func (f *Server) tick() string {
	f.clock++
	return strconv.FormatInt(f.clock, 10)
}

// Put stores a table as a client's create_table would (a copy; the
// server sets transient_lastDdlTime).
func (f *Server) Put(t *hm.Table) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := copyTable(t)
	if c.Parameters == nil {
		c.Parameters = map[string]string{}
	}
	c.Parameters["transient_lastDdlTime"] = f.tick()
	if c.CreateTime == 0 { // the server's, at create
		c.CreateTime = int32(f.clock)
	}
	if f.dbs[c.DbName] == nil {
		f.dbs[c.DbName] = map[string]*hm.Table{}
	}
	f.dbs[c.DbName][c.TableName] = c
}

// Edit changes a stored table's parameters the way a Hive-client writer
// does (the server moves transient_lastDdlTime).
func (f *Server) Edit(db, table string, params map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.dbs[db][table]
	maps.Copy(t.Parameters, params)
	t.Parameters["transient_lastDdlTime"] = f.tick()
}

// Table returns a copy of a stored table (nil when absent).
func (f *Server) Table(db, table string) *hm.Table {
	f.mu.Lock()
	defer f.mu.Unlock()
	return copyTable(f.dbs[db][table])
}

func copyTable(t *hm.Table) *hm.Table {
	if t == nil {
		return nil
	}
	c := *t
	c.Parameters = maps.Clone(t.Parameters)
	if t.Sd != nil {
		sd := *t.Sd
		sd.Cols = slices.Clone(t.Sd.Cols)
		if t.Sd.SerdeInfo != nil {
			si := *t.Sd.SerdeInfo
			si.Parameters = maps.Clone(t.Sd.SerdeInfo.Parameters)
			sd.SerdeInfo = &si
		}
		c.Sd = &sd
	}
	return &c
}

// GetVersion answers the version the fake plays ("4.0.1", "3.0").
func (f *Server) GetVersion(context.Context) (string, error) {
	f.count("getVersion")
	return f.version, nil
}

// GetAllDatabases lists the databases, sorted.
func (f *Server) GetAllDatabases(context.Context) ([]string, error) {
	f.count("get_all_databases")
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.dbs)), nil
}

// GetAllTables lists a database's tables, sorted.
func (f *Server) GetAllTables(_ context.Context, db string) ([]string, error) {
	f.count("get_all_tables")
	f.mu.Lock()
	defer f.mu.Unlock()
	ts, ok := f.dbs[db]
	if !ok {
		return nil, &hm.NoSuchObjectException{Message: "database " + db}
	}
	return slices.Sorted(maps.Keys(ts)), nil
}

// GetTableReq reads one table (a copy).
func (f *Server) GetTableReq(_ context.Context, req *hm.GetTableRequest) (*hm.GetTableResult_, error) {
	f.count("get_table_req")
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.dbs[req.DbName][req.TblName]
	if t == nil {
		return nil, &hm.NoSuchObjectException{Message: req.DbName + "." + req.TblName + " table not found"}
	}
	return &hm.GetTableResult_{Table: copyTable(t)}, nil
}

// GetTableObjectsByNameReq reads the named tables that exist, in the order asked.
func (f *Server) GetTableObjectsByNameReq(_ context.Context, req *hm.GetTablesRequest) (*hm.GetTablesResult_, error) {
	f.count("get_table_objects_by_name_req")
	if f.BeforeGetTables != nil {
		if err := f.BeforeGetTables(req.DbName, req.TblNames); err != nil {
			return nil, &hm.MetaException{Message: err.Error()}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	res := &hm.GetTablesResult_{Tables: []*hm.Table{}}
	for _, n := range req.TblNames {
		if t := f.dbs[req.DbName][n]; t != nil {
			res.Tables = append(res.Tables, copyTable(t))
		}
	}
	return res, nil
}

// AlterTableWithEnvironmentContext replaces a table, checking HMS 4's expected_parameter guard (ignored when playing HMS 3) and setting transient_lastDdlTime when the new table omits it.
func (f *Server) AlterTableWithEnvironmentContext(_ context.Context, db, name string, next *hm.Table, env *hm.EnvironmentContext) error {
	f.count("alter_table_with_environment_context")
	if f.BeforeAlter != nil {
		f.BeforeAlter(db, name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.dbs[db][name]
	if t == nil {
		return &hm.InvalidOperationException{Message: "table " + db + "." + name + " doesn't exist"}
	}
	if key, ok := env.GetProperties()["expected_parameter_key"]; ok && f.version >= "4" {
		want := env.GetProperties()["expected_parameter_value"]
		if got, has := t.Parameters[key]; !has || got != want {
			return &hm.MetaException{Message: fmt.Sprintf("The table has been modified. The parameter value for key '%s' is '%s'. The expected was value was '%s'", key, got, want)}
		}
		if _, set := next.Parameters[key]; !set {
			return &hm.MetaException{Message: "New value for expected key " + key + " is not set"}
		}
	}
	if bad := incompatibleColumns(t.Sd, next.Sd); len(bad) > 0 {
		// hive.metastore.disallow.incompatible.col.type.changes, true by
		// default in HMS 3 and 4 (HiveAlterHandler), with its message.
		return &hm.InvalidOperationException{Message: "The following columns have types incompatible with the existing columns in their respective positions :\n" + strings.Join(bad, ",")}
	}
	c := copyTable(next)
	if _, set := c.Parameters["transient_lastDdlTime"]; !set {
		c.Parameters["transient_lastDdlTime"] = f.tick()
	}
	f.dbs[db][name] = c
	return nil
}

// Lock takes an EXCLUSIVE table lock: ACQUIRED when the table is free
// and no one waits for it, else WAITING in the table's queue, as HMS
// queues lock requests (its HIVE_LOCKS rows, granted in id order).
func (f *Server) Lock(_ context.Context, req *hm.LockRequest) (*hm.LockResponse, error) {
	f.count("lock")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	comp := req.Component[0]
	key := comp.Dbname + "." + comp.GetTablename()
	if _, held := f.locks[key]; held || len(f.waiting[key]) > 0 {
		f.waiting[key] = append(f.waiting[key], f.nextID)
		return &hm.LockResponse{Lockid: f.nextID, State: hm.LockState_WAITING}, nil
	}
	f.locks[key] = f.nextID
	return &hm.LockResponse{Lockid: f.nextID, State: hm.LockState_ACQUIRED}, nil
}

// CheckLock grants a waiting lock once the table is free and it is first
// in the table's queue; a lock id it does not know (never taken, or
// unlocked) is NoSuchLockException, as HMS answers.
func (f *Server) CheckLock(_ context.Context, req *hm.CheckLockRequest) (*hm.LockResponse, error) {
	f.count("check_lock")
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range f.locks {
		if id == req.Lockid {
			return &hm.LockResponse{Lockid: id, State: hm.LockState_ACQUIRED}, nil
		}
	}
	for key, q := range f.waiting {
		i := slices.Index(q, req.Lockid)
		if i < 0 {
			continue
		}
		if _, held := f.locks[key]; i == 0 && !held {
			f.locks[key] = req.Lockid
			f.waiting[key] = q[1:]
			return &hm.LockResponse{Lockid: req.Lockid, State: hm.LockState_ACQUIRED}, nil
		}
		return &hm.LockResponse{Lockid: req.Lockid, State: hm.LockState_WAITING}, nil
	}
	return nil, &hm.NoSuchLockException{Message: fmt.Sprintf("No such lock: %d", req.Lockid)}
}

// Unlock releases a lock, held or waiting.
func (f *Server) Unlock(_ context.Context, req *hm.UnlockRequest) error {
	f.count("unlock")
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, id := range f.locks {
		if id == req.Lockid {
			delete(f.locks, k)
		}
	}
	for k, q := range f.waiting {
		f.waiting[k] = slices.DeleteFunc(q, func(id int64) bool { return id == req.Lockid })
	}
	return nil
}

// CreateDatabase creates an empty database (AlreadyExistsException when
// it exists).
func (f *Server) CreateDatabase(_ context.Context, d *hm.Database) error {
	f.count("create_database")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dbs[d.Name] != nil {
		return &hm.AlreadyExistsException{Message: "Database " + d.Name + " already exists"}
	}
	f.dbs[d.Name] = map[string]*hm.Table{}
	if d.LocationUri == "" { // as the real one fails
		return &hm.MetaException{Message: "java.lang.IllegalArgumentException: Can not create a Path from an empty string"}
	}
	if f.dbLocs == nil {
		f.dbLocs = map[string]string{}
	}
	f.dbLocs[d.Name] = d.LocationUri
	return nil
}

// GetDatabase reads a database (its location: the one it was created
// with, else file:/fakehms/warehouse/<name>.db); "default" is the
// warehouse, file:/fakehms/warehouse, and always exists.
func (f *Server) GetDatabase(_ context.Context, name string) (*hm.Database, error) {
	f.count("get_database")
	f.mu.Lock()
	defer f.mu.Unlock()
	if name == "default" && f.dbs[name] == nil {
		return &hm.Database{Name: name, LocationUri: "file:/fakehms/warehouse"}, nil
	}
	if f.dbs[name] == nil {
		return nil, &hm.NoSuchObjectException{Message: "database " + name}
	}
	loc := f.dbLocs[name]
	if loc == "" {
		loc = "file:/fakehms/warehouse/" + name + ".db"
	}
	return &hm.Database{Name: name, LocationUri: loc}, nil
}

// CreateTable stores a new table as HMS does (the server sets
// transient_lastDdlTime): NoSuchObjectException for a missing database,
// AlreadyExistsException for a name in use. BeforeCreate, when set, runs
// first (without the lock): another registrar creating the same name.
func (f *Server) CreateTable(_ context.Context, t *hm.Table) error {
	f.count("create_table")
	if f.BeforeCreate != nil {
		f.BeforeCreate(t.DbName, t.TableName)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dbs[t.DbName] == nil {
		return &hm.NoSuchObjectException{Message: "database " + t.DbName + " does not exist"}
	}
	if f.dbs[t.DbName][t.TableName] != nil {
		return &hm.AlreadyExistsException{Message: "Table " + t.DbName + "." + t.TableName + " already exists"}
	}
	c := copyTable(t)
	if c.Parameters == nil {
		c.Parameters = map[string]string{}
	}
	c.Parameters["transient_lastDdlTime"] = f.tick()
	c.CreateTime = int32(f.clock)
	f.dbs[t.DbName][t.TableName] = c
	return nil
}

// incompatibleColumns names the new columns whose type HMS refuses in
// place of the old column at the same position: a type other than the
// old one, unless a numeric type widens or a string, numeric or date
// type becomes a string type (after Hive's ColumnType.areColTypesCompatible,
// by the type's name without its parameters; close to it, not a port: the
// real servers' refusal is what TestHMSColumnsRealRefused holds them to).
func incompatibleColumns(old, next *hm.StorageDescriptor) []string {
	if old == nil || next == nil {
		return nil
	}
	numeric := map[string]int{"tinyint": 1, "smallint": 2, "int": 3, "bigint": 4, "float": 5, "double": 6, "decimal": 7}
	str := map[string]bool{"string": true, "varchar": true, "char": true}
	base := func(t string) string {
		t = strings.ToLower(strings.TrimSpace(t))
		if i := strings.IndexAny(t, "(<"); i >= 0 && t[i] == '(' {
			return t[:i]
		}
		return t
	}
	var bad []string
	for i := range min(len(old.Cols), len(next.Cols)) {
		o, n := base(old.Cols[i].Type), base(next.Cols[i].Type)
		switch {
		case o == n:
		case numeric[o] > 0 && numeric[n] > 0 && numeric[o] < numeric[n]:
		case str[n] && (str[o] || numeric[o] > 0 || o == "date" || o == "timestamp"):
		default:
			bad = append(bad, next.Cols[i].Name)
		}
	}
	return bad
}
