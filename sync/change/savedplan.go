package change

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
	"github.com/deltasync/deltasync/internal/redact"
	"github.com/deltasync/deltasync/sync/plan"
)

// SavedPlanFormatVersion is the format_version of a saved plan
// (`deltasync plan --out FILE`), and SavedPlanKind its kind. Format 2
// keeps each table's write as its catalog kind prepared it (request);
// format 1 kept Unity Catalog's actions or a Hive Metastore's edit in
// fields of their own, and is refused: plan again.
const (
	SavedPlanFormatVersion = "2"
	SavedPlanKind          = "deltasync-saved-plan"
)

// SavedPlan is a plan written to a file to be applied later, exactly
// (`deltasync apply FILE`, Apply): per table, the write a sync would
// send (catalog.Write), as the catalog's kind prepared it from the record
// it read, guarded by that record. Tables whose destructive changes were
// held are in it too (Held set): applying the plan is how a person lets
// them through.
type SavedPlan struct {
	FormatVersion string `json:"format_version"`
	Kind          string `json:"kind"`
	// CatalogURL is the catalog the plan was made for, as printed
	// (redact.Endpoint); CatalogID is the SHA-256 of its canonical form
	// (CatalogID), which Apply compares with the catalog it is given.
	CatalogURL string `json:"catalog_url"`
	// CatalogKind is the kind of catalog the plan was made for (its
	// catalog.Kind's Name): only that kind sends its writes.
	CatalogKind      string       `json:"catalog_kind"`
	CatalogID        string       `json:"catalog_id"`
	CreatedAt        time.Time    `json:"created_at"`
	DeltasyncVersion string       `json:"deltasync_version"`
	Tables           []SavedTable `json:"tables"`
}

// HeldDestructive is a saved table's held (and sync's Result.Held) when a
// sync would hold its write for its destructive changes.
const HeldDestructive = "destructive"

// SavedTable is one table's guarded write in a SavedPlan.
type SavedTable struct {
	Table string `json:"table"`
	// TableID and Etag are the record's id and etag the plan was made
	// against: the write's guard.
	TableID string `json:"table_id"`
	Etag    string `json:"etag"`
	// LogVersion is the log version the write describes.
	LogVersion int64 `json:"log_version"`
	// Held is "destructive" when a sync would have held the write.
	Held    string        `json:"held,omitempty"`
	Changes []plan.Change `json:"changes"`
	// Actions, Edit and Request are the write's (catalog.Write): what it
	// changes by name and in neutral terms, and the kind's own request.
	Actions []string        `json:"actions"`
	Edit    *catalog.Edit   `json:"edit"`
	Request json.RawMessage `json:"request"`
}

// write is the table's write, for kind to send.
func (t *SavedTable) write(kind string) (*catalog.Write, error) {
	name, err := catalog.ParseTableName(t.Table)
	if err != nil {
		return nil, err
	}
	return &catalog.Write{Kind: kind, Table: name, TableID: t.TableID, Etag: t.Etag, Edit: t.Edit,
		Actions: t.Actions, LogVersion: t.LogVersion, Request: t.Request}, nil
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

// NewSavedPlan is an empty saved plan for a catalog of kind
// (catalog.Kind.Name) at catalogURL; Add puts a table's write in it.
func NewSavedPlan(catalogURL, kind, version string, now time.Time) *SavedPlan {
	return &SavedPlan{FormatVersion: SavedPlanFormatVersion, Kind: SavedPlanKind, CatalogURL: redact.Endpoint(catalogURL),
		CatalogKind: kind, CatalogID: CatalogID(catalogURL), CreatedAt: now.UTC(), DeltasyncVersion: version, Tables: []SavedTable{}}
}

// Add puts w, the write a sync would send (held: HeldDestructive when a
// sync would hold it), with the plan's changes, in the plan.
func (p *SavedPlan) Add(w *catalog.Write, held string, changes []plan.Change) {
	if changes == nil {
		changes = []plan.Change{}
	}
	p.Tables = append(p.Tables, SavedTable{Table: w.Table.String(), TableID: w.TableID, Etag: w.Etag, Held: held,
		LogVersion: w.LogVersion, Changes: changes, Actions: w.Actions, Edit: w.Edit, Request: w.Request})
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
	if p.CatalogKind == "" {
		return errors.New("catalog_kind: missing")
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
		if len(t.Actions) == 0 {
			errs = append(errs, fmt.Errorf("%s: actions: missing", at))
		}
		if t.Edit == nil {
			errs = append(errs, fmt.Errorf("%s: edit: missing", at))
		}
		if len(bytes.TrimSpace(t.Request)) == 0 || string(t.Request) == "null" {
			errs = append(errs, fmt.Errorf("%s: request: missing (the write the catalog is sent)", at))
		}
	}
	return errors.Join(errs...)
}

// CheckWrites checks each table's request as kind would send it (a kind
// that checks requests implements CheckWrite): a plan is applied whole or
// not at all, so one malformed request refuses the plan.
func (p *SavedPlan) CheckWrites(kind catalog.Kind) error {
	c, ok := kind.(interface{ CheckWrite(*catalog.Write) error })
	if !ok {
		return nil
	}
	var errs []error
	for i := range p.Tables {
		t := &p.Tables[i]
		w, err := t.write(kind.Name())
		if err == nil {
			err = c.CheckWrite(w)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("tables[%d] (%s): request: %w", i, t.Table, err))
		}
	}
	return errors.Join(errs...)
}

// CheckCatalog refuses a plan made for another catalog than baseURL, a
// catalog of kind (catalog.Kind.Name).
func (p *SavedPlan) CheckCatalog(baseURL, kind string) error {
	if p.CatalogKind != kind {
		return fmt.Errorf("the plan was made for a %s (%s), and catalog.url %s is a %s: nothing applied",
			KindTitle(p.CatalogKind), p.CatalogURL, redact.Endpoint(baseURL), KindTitle(kind))
	}
	if p.CatalogID != CatalogID(baseURL) {
		return fmt.Errorf("the plan was made for catalog %s, not %s: nothing applied; plan again against this catalog",
			p.CatalogURL, redact.Endpoint(baseURL))
	}
	return nil
}

// KindTitle is a catalog kind's name (catalog.Kind.Name) as sentences
// say it.
func KindTitle(kind string) string {
	switch kind {
	case "hive-metastore":
		return "Hive Metastore"
	case "unity-catalog":
		return "Unity Catalog"
	case "glue":
		return "AWS Glue Data Catalog"
	}
	return kind
}
