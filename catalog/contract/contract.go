package contract

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Option configures Run.
type Option func(*config)

type config struct {
	client          *http.Client
	token           string
	violationHeader string
}

// WithToken sends Authorization: Bearer token on every request.
func WithToken(token string) Option { return func(o *config) { o.token = token } }

// WithViolationHeader names a header the suite sets on the few requests it
// sends on purpose although the API definitions forbid them (an unknown
// update action). uctest records such requests apart from real violations.
func WithViolationHeader(name string) Option { return func(o *config) { o.violationHeader = name } }

// Run runs the contract suite against the server at baseURL (ending in
// /api/2.1/unity-catalog).
func Run(t *testing.T, baseURL string, opts ...Option) {
	cfg := config{client: defaultClient()}
	for _, o := range opts {
		o(&cfg)
	}
	h := &harness{cfg: cfg, base: strings.TrimRight(baseURL, "/"), catalog: "deltasync_ct_" + randHex(6)}
	h.setup(t)
	t.Run("Config", h.testConfig)
	t.Run("CreateAndLoadExternal", h.testCreateAndLoad)
	t.Run("UpdateActionsOneByOne", h.testUpdateActions)
	t.Run("UpdateCombined", h.testUpdateCombined)
	t.Run("EtagRollsOnNoOp", h.testEtagNoOp)
	t.Run("RequirementConflicts", h.testRequirementConflicts)
	t.Run("ShapeErrorsBeforeNotFound", h.testShapeErrors)
	t.Run("ExternalGating", h.testExternalGating)
	t.Run("ClassicGetTable", h.testClassicGetTable)
	t.Run("ClassicPaging", h.testPaging)
	t.Run("ListingUpdatedAt", h.testListingUpdatedAt)
	t.Run("HeadDeleteRename", h.testHeadDeleteRename)
	t.Run("NotFoundEnvelopes", h.testNotFound)
	t.Run("NonDeltaTable", h.testNonDelta)
	t.Run("Credentials", h.testCredentials)
	t.Run("ManagedCommits", h.testManaged)
	t.Run("Refusals", h.testRefusals)
	t.Run("Renames", h.testRenames)
	t.Run("DecimalPrecisionNull", h.testDecimalPrecisionNull)
}

type harness struct {
	cfg     config
	base    string
	catalog string
	schema  string
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// response is one raw answer.
type response struct {
	status int
	body   []byte
	json   map[string]any
}

type reqOpt func(*http.Request)

func expectViolation(h *harness) reqOpt {
	return func(r *http.Request) {
		if h.cfg.violationHeader != "" {
			r.Header.Set(h.cfg.violationHeader, "1")
		}
	}
}

func (h *harness) do(t *testing.T, method, path string, body any, opts ...reqOpt) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if h.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.token)
	}
	for _, o := range opts {
		o(req)
	}
	res, err := h.cfg.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	r := response{status: res.StatusCode, body: b}
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &r.json); err != nil {
			t.Fatalf("%s %s: %d with non-JSON-object body %q", method, path, res.StatusCode, b)
		}
	}
	return r
}

// want fails t unless r has the status.
func (r response) want(t *testing.T, status int, what string) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, status, r.body)
	}
	return r
}

// deltaError checks the Delta envelope: {"error":{"message","type","code"}}.
func (r response) deltaError(t *testing.T, status int, typ, msgContains, what string) {
	t.Helper()
	r.want(t, status, what)
	e, ok := r.json["error"].(map[string]any)
	if !ok {
		t.Fatalf("%s: no Delta error envelope in %s", what, r.body)
	}
	if e["type"] != typ {
		t.Errorf("%s: error.type %v, want %s (body %s)", what, e["type"], typ, r.body)
	}
	if code, _ := e["code"].(float64); int(code) != status {
		t.Errorf("%s: error.code %v, want %d", what, e["code"], status)
	}
	if msg, _ := e["message"].(string); !strings.Contains(msg, msgContains) {
		t.Errorf("%s: error.message %q does not contain %q", what, msg, msgContains)
	}
}

// classicError checks the classic envelope {"error_code","message",...}.
func (r response) classicError(t *testing.T, status int, codeContains, what string) {
	t.Helper()
	r.want(t, status, what)
	code, _ := r.json["error_code"].(string)
	if !strings.Contains(code, codeContains) {
		t.Errorf("%s: error_code %q does not contain %q (body %s)", what, code, codeContains, r.body)
	}
	if _, ok := r.json["message"].(string); !ok {
		t.Errorf("%s: no message in %s", what, r.body)
	}
}

func (h *harness) setup(t *testing.T) {
	t.Helper()
	h.do(t, "POST", "/catalogs", map[string]any{"name": h.catalog, "comment": "deltasync contract suite"}).want(t, 200, "create catalog")
	h.schema = h.newSchema(t, "main")
	t.Cleanup(func() {
		// Best effort: leave a long-lived server tidy.
		req, _ := http.NewRequest("DELETE", h.base+"/catalogs/"+url.PathEscape(h.catalog)+"?force=true", nil)
		if h.cfg.token != "" {
			req.Header.Set("Authorization", "Bearer "+h.cfg.token)
		}
		if res, err := h.cfg.client.Do(req); err == nil {
			res.Body.Close()
		}
	})
}

func (h *harness) newSchema(t *testing.T, name string) string {
	t.Helper()
	h.do(t, "POST", "/schemas", map[string]any{"name": name, "catalog_name": h.catalog}).want(t, 200, "create schema "+name)
	return name
}

func (h *harness) tablePath(schema, table string) string {
	return fmt.Sprintf("/delta/v1/catalogs/%s/schemas/%s/tables/%s", h.catalog, schema, table)
}

func (h *harness) full(schema, table string) string { return h.catalog + "." + schema + "." + table }

func defaultClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }
