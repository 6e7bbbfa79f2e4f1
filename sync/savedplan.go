package sync

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/internal/redact"
	"github.com/deltasync/deltasync/sync/plan"
)

// SavedPlanFormatVersion is the format_version of a saved plan
// (`deltasync plan --out FILE`), and SavedPlanKind its kind.
const (
	SavedPlanFormatVersion = "1"
	SavedPlanKind          = "deltasync-saved-plan"
)

// SavedPlan is a plan written to a file to be applied later, exactly
// (`deltasync apply FILE`, Apply): per table, the record's uuid and etag
// the plan was made against and the updateTable actions, in wire form,
// that make the record match the log as it was read. Tables whose
// destructive changes were held are in it too (Held set): applying the
// plan is how a person lets them through.
type SavedPlan struct {
	FormatVersion string `json:"format_version"`
	Kind          string `json:"kind"`
	// CatalogURL is the catalog the plan was made for, as printed
	// (redact.Endpoint); CatalogID is the SHA-256 of its canonical form
	// (CatalogID), which Apply compares with the catalog it is given.
	CatalogURL string `json:"catalog_url"`
	// CatalogKind is the kind of catalog the plan was made for:
	// CatalogKindHMS, or absent (or CatalogKindUC) for Unity Catalog.
	CatalogKind      string       `json:"catalog_kind,omitempty"`
	CatalogID        string       `json:"catalog_id"`
	CreatedAt        time.Time    `json:"created_at"`
	DeltasyncVersion string       `json:"deltasync_version"`
	Tables           []SavedTable `json:"tables"`
}

// The kinds of catalog a saved plan is made for (SavedPlan.CatalogKind).
const (
	CatalogKindUC  = "unity-catalog"
	CatalogKindHMS = "hive-metastore"
)

// catalogKindOf is the kind a catalog URL selects: thrift:// is a Hive
// Metastore, anything else Unity Catalog (as the configuration decides).
func catalogKindOf(url string) string {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(url)), "thrift://") {
		return CatalogKindHMS
	}
	return CatalogKindUC
}

// SavedTable is one table's guarded update in a SavedPlan.
type SavedTable struct {
	Table string `json:"table"`
	// TableID and Etag are the record's uuid and etag the plan was made
	// against: the update is sent with assert-table-uuid and assert-etag.
	TableID string `json:"table_id"`
	Etag    string `json:"etag"`
	// LogVersion is the log version the updates describe.
	LogVersion int64 `json:"log_version"`
	// Held is "destructive" when a sync would have held the update.
	Held    string        `json:"held,omitempty"`
	Changes []plan.Change `json:"changes"`
	Updates []uc.Update   `json:"-"`
	// RecordFingerprint and Metastore are a Hive Metastore table's (kind
	// CatalogKindHMS): the fingerprint of the record the plan was made
	// from (every parameter, serde parameter and column) and the write,
	// as the parameters set and removed (and the columns, with columns:
	// real). Updates are then the same change in the Delta API's terms,
	// for the report and the audit trail; Metastore is what is sent.
	RecordFingerprint string    `json:"record_fingerprint,omitempty"`
	Metastore         *hms.Edit `json:"metastore,omitempty"`
}

// SavedWrite is what a saved plan keeps of a write besides its Delta API
// updates, for a catalog kind whose write is not those updates: a Hive
// Metastore's record fingerprint and edit (SavedTable).
type SavedWrite struct {
	RecordFingerprint string
	Edit              hms.Edit
}

// MarshalJSON writes the table with its updates in the Delta API's wire
// form (the "updates" array of an updateTable request).
func (t SavedTable) MarshalJSON() ([]byte, error) {
	type plain SavedTable
	p := plain(t)
	if p.Changes == nil {
		p.Changes = []plan.Change{}
	}
	req, err := json.Marshal(uc.UpdateTableRequest{Updates: t.Updates})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Table, err)
	}
	var w struct {
		Updates json.RawMessage `json:"updates"`
	}
	if err := json.Unmarshal(req, &w); err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		plain
		Updates json.RawMessage `json:"updates"`
	}{p, w.Updates})
}

// UnmarshalJSON reads the wire form; an unknown action is an error.
func (t *SavedTable) UnmarshalJSON(b []byte) error {
	type plain SavedTable
	var w struct {
		plain
		Updates json.RawMessage `json:"updates"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*t = SavedTable(w.plain)
	if len(w.Updates) == 0 || string(w.Updates) == "null" {
		return nil
	}
	var req uc.UpdateTableRequest
	if err := json.Unmarshal([]byte(`{"updates":`+string(w.Updates)+`}`), &req); err != nil {
		return fmt.Errorf("updates: %w", err)
	}
	t.Updates = req.Updates
	return nil
}

// CatalogID is the identity a saved plan records of the catalog it was
// made for: the SHA-256 of the base URL with scheme and host lower-cased,
// user info, query and fragment dropped and trailing slashes trimmed, so
// that the same catalog spelled alike matches and a secret in the URL is
// not in the file.
func CatalogID(baseURL string) string {
	s := strings.TrimSpace(baseURL)
	if u, err := url.Parse(s); err == nil {
		u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		u.User, u.RawQuery, u.Fragment, u.RawFragment, u.ForceQuery = nil, "", "", "", false
		u.Path, u.RawPath = strings.TrimRight(u.Path, "/"), ""
		s = u.String()
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// NewSavedPlan is the saved plan of a dry run's report: every table a sync
// would update, and every table whose update was held, with the exact
// updates. Tables with nothing to send (in sync, flagged watch-only,
// failed) are not in it.
func NewSavedPlan(rep *Report, catalogURL, version string, now time.Time) *SavedPlan {
	sp := &SavedPlan{FormatVersion: SavedPlanFormatVersion, Kind: SavedPlanKind, CatalogURL: redact.Endpoint(catalogURL),
		CatalogID: CatalogID(catalogURL), CreatedAt: now.UTC(), DeltasyncVersion: version, Tables: []SavedTable{}}
	if catalogKindOf(catalogURL) == CatalogKindHMS {
		// Unity Catalog's plans leave the key out, as they did before
		// there were two kinds: an older deltasync applies them still.
		sp.CatalogKind = CatalogKindHMS
	}
	for _, res := range rep.Results {
		if (!res.WouldUpdate && res.Held == "") || len(res.Updates) == 0 || res.TableID == "" {
			continue
		}
		t := SavedTable{Table: res.Table, TableID: res.TableID, Etag: res.Etag, Held: res.Held, Updates: res.Updates}
		if res.LogVersion != nil {
			t.LogVersion = *res.LogVersion
		}
		if res.Plan != nil {
			t.Changes = res.Plan.Changes()
		}
		if w := res.SavedWrite; w != nil {
			t.RecordFingerprint = w.RecordFingerprint
			e := w.Edit
			t.Metastore = &e
		}
		sp.Tables = append(sp.Tables, t)
	}
	return sp
}

// WriteJSON writes the plan as one JSON document.
func (p *SavedPlan) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// ReadSavedPlan reads and checks a saved plan; name is the file's name in
// errors. An empty, truncated or malformed document, another format or
// version, and a table without its name, uuid, etag or updates (or with
// an update the Delta API refuses in shape, see
// catalog.UpdateTableRequest.Validate) are errors naming the file and the
// field: a plan is applied whole or not at all. A file of more than
// MaxSavedPlanBytes is refused after reading at most one byte more.
func ReadSavedPlan(r io.Reader, name string) (*SavedPlan, error) {
	return readSavedPlan(r, name, MaxSavedPlanBytes)
}

// MaxSavedPlanBytes bounds a saved plan file: 256 MiB, some 20,000 tables
// each with a 10,000-column schema change in it, so that a wrong file (a
// device, a log, a sparse file of gigabytes) is refused instead of read
// into memory whole.
const MaxSavedPlanBytes = 256 << 20

func readSavedPlan(r io.Reader, name string, limit int64) (*SavedPlan, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("plan file %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("plan file %s is larger than %d bytes, more than any saved plan: not a plan file", name, limit)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("plan file %s is empty: write one with deltasync plan --out %s", name, name)
	}
	var sp SavedPlan
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("plan file %s is truncated (the JSON document ends early): plan again", name)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("plan file %s is not a saved plan: invalid JSON at byte %d: %v", name, se.Offset, err)
		}
		return nil, fmt.Errorf("plan file %s is not a saved plan: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("plan file %s is not a saved plan: more than one JSON document", name)
	}
	if err := sp.check(); err != nil {
		return nil, fmt.Errorf("plan file %s: %w", name, err)
	}
	return &sp, nil
}

func (p *SavedPlan) check() error {
	if p.Kind != SavedPlanKind {
		return fmt.Errorf("kind %q: not a deltasync saved plan (want %q)", p.Kind, SavedPlanKind)
	}
	if p.FormatVersion != SavedPlanFormatVersion {
		return fmt.Errorf("format_version %q: this deltasync reads saved plans of format_version %q; plan again with it", p.FormatVersion, SavedPlanFormatVersion)
	}
	if p.CatalogID == "" {
		return errors.New("catalog_id: missing")
	}
	hmsPlan := false
	switch p.CatalogKind {
	case "", CatalogKindUC:
	case CatalogKindHMS:
		hmsPlan = true
	default:
		return fmt.Errorf("catalog_kind %q: want %q or %q", p.CatalogKind, CatalogKindUC, CatalogKindHMS)
	}
	if p.Tables == nil {
		return errors.New("tables: missing")
	}
	seen := map[string]bool{}
	var errs []error
	for i, t := range p.Tables {
		at := fmt.Sprintf("tables[%d]", i)
		if t.Table != "" {
			at += " (" + t.Table + ")"
		}
		if _, err := catalog.ParseTableName(t.Table); err != nil {
			errs = append(errs, fmt.Errorf("%s: table: %w", at, err))
		} else if seen[strings.ToLower(t.Table)] {
			errs = append(errs, fmt.Errorf("%s: table: listed twice", at))
		}
		seen[strings.ToLower(t.Table)] = true
		if t.TableID == "" {
			errs = append(errs, fmt.Errorf("%s: table_id: missing", at))
		}
		if t.Etag == "" {
			errs = append(errs, fmt.Errorf("%s: etag: missing", at))
		}
		if t.Held != "" && t.Held != HeldDestructive {
			errs = append(errs, fmt.Errorf("%s: held %q: want %q or none", at, t.Held, HeldDestructive))
		}
		for _, u := range t.Updates {
			if a := u.Action(); a == "add-commit" || a == "set-latest-backfilled-version" {
				errs = append(errs, fmt.Errorf("%s: updates: %s is for MANAGED tables; deltasync never sends it", at, a))
			}
		}
		if err := t.request().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: updates: %w", at, err))
		}
		switch {
		case !hmsPlan && (t.Metastore != nil || t.RecordFingerprint != ""):
			errs = append(errs, fmt.Errorf("%s: metastore, record_fingerprint: only in a plan for a Hive Metastore (catalog_kind %q)", at, CatalogKindHMS))
		case !hmsPlan:
		case t.RecordFingerprint == "":
			errs = append(errs, fmt.Errorf("%s: record_fingerprint: missing", at))
		case t.Metastore == nil || t.Metastore.Empty():
			errs = append(errs, fmt.Errorf("%s: metastore: missing (the write a Hive Metastore is sent)", at))
		default:
			if err := t.Metastore.Check(); err != nil {
				errs = append(errs, fmt.Errorf("%s: metastore: %w", at, err))
			}
		}
	}
	return errors.Join(errs...)
}

// request is the table's guarded updateTable request.
func (t *SavedTable) request() uc.UpdateTableRequest {
	return uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: t.TableID}, uc.AssertEtag{Etag: t.Etag}},
		Updates:      t.Updates,
	}
}

// CheckCatalog refuses a plan made for another catalog than baseURL.
func (p *SavedPlan) CheckCatalog(baseURL string) error {
	kind := p.CatalogKind
	if kind == "" {
		kind = CatalogKindUC
	}
	if kind != catalogKindOf(baseURL) {
		return fmt.Errorf("the plan was made for a %s (%s), and catalog.url %s is a %s: nothing applied",
			kindName(kind), p.CatalogURL, redact.Endpoint(baseURL), kindName(catalogKindOf(baseURL)))
	}
	if p.CatalogID != CatalogID(baseURL) {
		return fmt.Errorf("the plan was made for catalog %s, not %s: nothing applied; plan again against this catalog",
			p.CatalogURL, redact.Endpoint(baseURL))
	}
	return nil
}

func kindName(kind string) string {
	if kind == CatalogKindHMS {
		return "Hive Metastore"
	}
	return "Unity Catalog"
}
