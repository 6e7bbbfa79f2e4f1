package uctest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"
)

// basePath is where both APIs live.
const basePath = "/api/2.1/unity-catalog"

// Server is the in-memory Unity Catalog. Create it with NewServer (or, in
// tests, spectest.NewForTest), point clients at URL(), Close it when done.
type Server struct {
	http      *httptest.Server
	mux       *http.ServeMux
	validator Validator
	cfg       config

	mu           sync.Mutex
	catalogs     map[string]*catalogEntry
	staging      map[string]*stagingEntry // by location
	etagSeq      uint64
	requests     []RecordedRequest
	violations   []string
	expected     []string
	failN        int
	failStatus   int
	failType     string
	failMessage  string
	latency      time.Duration
	beforeUpdate func(name string)
	credConfig   func(location string) map[string]string
	noDeltaAPI   bool
}

type catalogEntry struct {
	name, comment, id string
	properties        map[string]string
	createdAt         int64
	schemas           map[string]*schemaEntry
}

type schemaEntry struct {
	name, comment, id string
	properties        map[string]string
	createdAt         int64
	tables            map[string]*Table
}

type stagingEntry struct {
	id, catalog, schema, name, location string
	finalized                           bool
}

// RecordedRequest is one request as the server received it.
type RecordedRequest struct {
	Method string
	Path   string // full URL path, e.g. /api/2.1/unity-catalog/delta/v1/...
	Query  string // raw query
	Body   []byte
}

// ExpectViolationHeader marks a request a test sends on purpose although the
// API definitions forbid it: it is still answered 400 but recorded in
// ExpectedViolations instead of Violations. Real servers ignore the header.
const ExpectViolationHeader = "Uctest-Expect-Violation"

type config struct {
	validator      func() (Validator, error)
	clusteringKey  string
	replayConflict bool
	firstCommitV1  bool
	managedRoot    string
	now            func() time.Time
	// refuseClustering answers set-domain-metadata with delta.clustering as
	// Databricks does (WithClusteringUpdatesRefused).
	refuseClustering bool
	// renameGuards applies the set-columns rename and drop guards of open
	// Unity Catalog PRs #1907/#1909/#1910 (WithColumnRenameGuards).
	renameGuards bool
}

// Option configures a Server.
type Option func(*config)

// Validator checks requests and responses against API definitions. The
// server calls it for every request, before failure injection and the
// handlers. Package spectest implements it with the OpenAPI definitions;
// this package does not, so that programs (the demo) linking the server do
// not link an OpenAPI validator.
type Validator interface {
	// ValidateRequest checks r, whose body is body. A *NoRouteError means
	// the definitions have no such path or method; any other error is a
	// request the definitions forbid (answered 400). check, when not nil,
	// is then called with the response the handlers produced.
	ValidateRequest(r *http.Request, body []byte) (check ResponseCheck, err error)
}

// ResponseCheck validates the response to one request.
type ResponseCheck func(ctx context.Context, status int, header http.Header, body []byte) error

// NoRouteError is a request to a path or method the definitions do not
// have; it is answered with Status (404 or 405).
type NoRouteError struct {
	Status int
	Err    error
}

func (e *NoRouteError) Error() string { return e.Err.Error() }

func (e *NoRouteError) Unwrap() error { return e.Err }

// WithValidator validates every request and response with the Validator
// load returns; NewServer calls load once and panics if it fails. The last
// WithValidator or WithoutSpecValidation given wins. Without either the
// server validates nothing.
func WithValidator(load func() (Validator, error)) Option {
	return func(c *config) { c.validator = load }
}

// WithoutSpecValidation turns request/response validation off (it undoes an
// earlier WithValidator, e.g. the default one spectest.NewServer adds).
func WithoutSpecValidation() Option { return func(c *config) { c.validator = nil } }

// WithClusteringKey sets the property key the delta.clustering domain is
// projected to. Default "clusteringColumns" (what the server stores); the
// spec says "delta.clusteringColumns" (§10.2).
func WithClusteringKey(key string) Option { return func(c *config) { c.clusteringKey = key } }

// WithReplayConflict answers a replayed add-commit (same version and
// file-name) with 409 CommitVersionConflictException, as the managed-tables
// spec's recovery section says, instead of the server's 200 no-op (§10.1).
func WithReplayConflict() Option { return func(c *config) { c.replayConflict = true } }

// WithClusteringUpdatesRefused answers an updateTable whose
// set-domain-metadata sets delta.clustering as Databricks-hosted Unity
// Catalog does for outside writers: 400 InvalidParameterValueException
// "Update to Delta domain metadata delta.clustering is not allowed"
// (error code 5115; delta-io/delta PR #7497). The OSS server accepts it.
func WithClusteringUpdatesRefused() Option { return func(c *config) { c.refuseClustering = true } }

// WithColumnRenameGuards answers set-columns as the server does with the
// guards of Unity Catalog PRs #1907, #1909 and #1910 (open as of 0.6.0):
// 400 InvalidParameterValueException for a top-level column renamed or
// dropped on a table without column mapping, for more than one top-level
// rename in one request, and for a retained column that loses its
// column-mapping id. Renames are found by column-mapping id (id mode) or
// physical name (name mode), as the PRs do.
func WithColumnRenameGuards() Option { return func(c *config) { c.renameGuards = true } }

// WithFirstCommitV1 rejects a first add-commit whose version is not 1, as the
// spec says; the server accepts any positive version (§10.3).
func WithFirstCommitV1() Option { return func(c *config) { c.firstCommitV1 = true } }

// WithManagedStorageRoot sets where staging tables are allocated (default
// file:///uctest-managed, which is never written to by the server).
func WithManagedStorageRoot(url string) Option {
	return func(c *config) { c.managedRoot = strings.TrimRight(url, "/") }
}

// NewServer starts a server on 127.0.0.1. It validates requests only when
// given WithValidator (spectest.NewServer does that by default); it panics
// when the validator cannot be loaded.
func NewServer(opts ...Option) *Server {
	cfg := config{clusteringKey: "clusteringColumns", managedRoot: "file:///uctest-managed", now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	s := &Server{cfg: cfg, catalogs: map[string]*catalogEntry{}, staging: map[string]*stagingEntry{}}
	if cfg.validator != nil {
		v, err := cfg.validator()
		if err != nil {
			panic(err.Error())
		}
		s.validator = v
	}
	s.mux = http.NewServeMux()
	s.routes()
	s.http = httptest.NewUnstartedServer(s)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("uctest: listen on 127.0.0.1: %v", err))
	}
	s.http.Listener = l
	s.http.Start()
	return s
}

// URL is the base URL, ending in /api/2.1/unity-catalog.
func (s *Server) URL() string { return s.http.URL + basePath }

// SetDeltaAPI switches the Delta API (everything under /delta/v1) on or
// off. Off, the server answers it 404 with no error envelope, like a Unity
// Catalog release (or another implementation of the classic API) that has
// none; the classic API is unchanged. It is on by default.
func (s *Server) SetDeltaAPI(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noDeltaAPI = !on
}

// Close shuts the server down.
func (s *Server) Close() { s.http.Close() }

// AddCatalog creates a catalog without HTTP; an existing one is kept.
func (s *Server) AddCatalog(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addCatalogLocked(name, "", nil)
}

// AddSchema creates a schema (and its catalog if missing) without HTTP.
func (s *Server) AddSchema(catalog, schema string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.addCatalogLocked(catalog, "", nil)
	s.addSchemaLocked(c, schema, "", nil)
}

func (s *Server) addCatalogLocked(name, comment string, props map[string]string) *catalogEntry {
	if c, ok := s.catalogs[name]; ok {
		return c
	}
	c := &catalogEntry{name: name, comment: comment, id: newUUID(), properties: props, createdAt: s.nowMs(), schemas: map[string]*schemaEntry{}}
	s.catalogs[name] = c
	return c
}

func (s *Server) addSchemaLocked(c *catalogEntry, name, comment string, props map[string]string) *schemaEntry {
	if sc, ok := c.schemas[name]; ok {
		return sc
	}
	sc := &schemaEntry{name: name, comment: comment, id: newUUID(), properties: props, createdAt: s.nowMs(), tables: map[string]*Table{}}
	c.schemas[name] = sc
	return sc
}

// FailNext makes the next n requests fail with status and a proper error
// envelope (Delta or classic by path; no body for HEAD).
func (s *Server) FailNext(n int, status int) { s.FailNextError(n, status, "", "injected failure") }

// FailNextError is FailNext with an explicit Delta error type (empty: picked
// from the status) and message.
func (s *Server) FailNextError(n, status int, errType, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN, s.failStatus, s.failType, s.failMessage = n, status, errType, message
}

// SetLatency delays every request by d (the request's context still wins).
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// BeforeUpdate installs fn, called with the table's full name when an
// updateTable request arrives, before it is processed. It may call
// MutateTable (e.g. to make the caller's etag stale and force a 409).
func (s *Server) BeforeUpdate(fn func(name string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeUpdate = fn
}

// SetCredentialConfig sets the function that fills the "config" map of
// vended credentials (default: empty, fine for file:// locations).
func (s *Server) SetCredentialConfig(fn func(location string) map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.credConfig = fn
}

// MutateTable changes a stored table out of band and rolls its etag and
// updated time. fullName is catalog.schema.table.
func (s *Server) MutateTable(fullName string, fn func(*Table)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookupFull(fullName)
	if err != nil {
		return err
	}
	fn(t)
	s.touch(t)
	return nil
}

// Table returns a copy of a stored table.
func (s *Server) Table(fullName string) (Table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookupFull(fullName)
	if err != nil {
		return Table{}, false
	}
	return *t.clone(), true
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.requests...)
}

// ResetRequests forgets the recorded requests.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// Violations lists requests the API definitions forbid and responses that
// break them (the latter are bugs in this server). Tests assert it is empty.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// ExpectedViolations lists violations of requests that carried
// ExpectViolationHeader.
func (s *Server) ExpectedViolations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.expected...)
}

func (s *Server) recordViolation(r *http.Request, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r != nil && r.Header.Get(ExpectViolationHeader) != "" {
		s.expected = append(s.expected, msg)
		return
	}
	s.violations = append(s.violations, msg)
}

func (s *Server) nowMs() int64 { return s.cfg.now().UnixMilli() }

// touch rolls t's etag and updated time.
func (s *Server) touch(t *Table) {
	s.etagSeq++
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], s.etagSeq)
	t.Etag = "uct." + base64.RawURLEncoding.EncodeToString(b[:])
	now := s.nowMs()
	if now <= t.UpdatedTime {
		now = t.UpdatedTime + 1
	}
	t.UpdatedTime = now
}

func (s *Server) lookupFull(full string) (*Table, error) {
	parts := strings.Split(full, ".")
	if len(parts) != 3 {
		return nil, invalid("Invalid table name: %s", full)
	}
	t, aerr := s.lookup(parts[0], parts[1], parts[2])
	if aerr != nil {
		return nil, aerr
	}
	return t, nil
}

// lookup resolves a table; s.mu must be held.
func (s *Server) lookup(catalog, schema, table string) (*Table, *apiError) {
	sc, err := s.lookupSchema(catalog, schema)
	if err != nil {
		return nil, err
	}
	t, ok := sc.tables[table]
	if !ok {
		return nil, tableNotFound(catalog + "." + schema + "." + table)
	}
	return t, nil
}

func (s *Server) lookupSchema(catalog, schema string) (*schemaEntry, *apiError) {
	c, ok := s.catalogs[catalog]
	if !ok {
		return nil, catalogNotFound(catalog)
	}
	sc, ok := c.schemas[schema]
	if !ok {
		return nil, schemaNotFound(catalog + "." + schema)
	}
	return sc, nil
}

// ServeHTTP records, delays, validates and injects failures around the
// handlers, then validates the response.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	_ = r.Body.Close()
	s.mu.Lock()
	s.requests = append(s.requests, RecordedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body})
	latency, noDeltaAPI := s.latency, s.noDeltaAPI
	s.mu.Unlock()
	if noDeltaAPI && (r.URL.Path == deltaBase || strings.HasPrefix(r.URL.Path, deltaBase+"/")) {
		writeNoRoute(w, http.StatusNotFound)
		return
	}
	if latency > 0 {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
			return
		}
	}
	var check ResponseCheck
	if s.validator != nil {
		var err error
		check, err = s.validator.ValidateRequest(r, body)
		var nr *NoRouteError
		if errors.As(err, &nr) {
			s.recordViolation(r, "request: "+nr.Error())
			writeNoRoute(w, nr.Status)
			return
		}
		if err != nil {
			msg := fmt.Sprintf("request %s %s violates the API definition: %v", r.Method, r.URL.Path, err)
			s.recordViolation(r, msg)
			writeError(w, r, invalid("%s", msg))
			return
		}
	}
	if e := s.takeFailure(); e != nil {
		writeError(w, r, e)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, r)
	res := rec.Result()
	out := rec.Body.Bytes()
	if check != nil {
		if err := check(r.Context(), res.StatusCode, res.Header, out); err != nil {
			s.recordViolation(nil, fmt.Sprintf("response %d to %s %s violates the API definition (uctest bug): %v", res.StatusCode, r.Method, r.URL.Path, err))
		}
	}
	for k, vals := range res.Header {
		w.Header()[k] = vals
	}
	w.WriteHeader(res.StatusCode)
	if r.Method != http.MethodHead {
		_, _ = w.Write(out)
	}
}

func (s *Server) takeFailure() *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failN <= 0 {
		return nil
	}
	s.failN--
	return &apiError{Status: s.failStatus, Type: s.failType, Message: s.failMessage}
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
