package uc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deltasync/deltasync/catalog"
	"github.com/google/go-cmp/cmp"
)

func TestParseAPIError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   APIError
	}{
		{"delta envelope", 404, `{"error":{"message":"Table not found: c.s.t","type":"NoSuchTableException","code":404,"stack":["x"]}}`,
			APIError{Status: 404, Type: "NoSuchTableException", Message: "Table not found: c.s.t"}},
		{"classic envelope", 404, `{"error_code":"TABLE_NOT_FOUND","message":"Table not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TABLE_NOT_FOUND"}]}`,
			APIError{Status: 404, Type: "TABLE_NOT_FOUND", Message: "Table not found"}},
		{"classic without code", 500, `{"message":"boom"}`, APIError{Status: 500, Message: "boom"}},
		{"error as string", 502, `{"error":"bad gateway upstream"}`, APIError{Status: 502, Message: "bad gateway upstream"}},
		{"html body", 502, "<html>\n  <body>Bad   Gateway</body>\n</html>", APIError{Status: 502, Message: "<html> <body>Bad Gateway</body> </html>"}},
		{"empty body", 503, "", APIError{Status: 503, Message: "Service Unavailable"}},
		{"unrelated json", 400, `{"foo":1}`, APIError{Status: 400, Message: `{"foo":1}`}},
		{"json array", 400, `[1,2]`, APIError{Status: 400, Message: `[1,2]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseAPIError(tt.status, []byte(tt.body))
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAPIErrorTrimsLongBodies(t *testing.T) {
	got := parseAPIError(500, []byte(strings.Repeat("é", 5000)))
	if len(got.Message) > maxErrorMessage+len("…") || !utf8.ValidString(got.Message) {
		t.Errorf("message not bounded/valid: len %d", len(got.Message))
	}
}

func TestErrorPredicates(t *testing.T) {
	e := func(status int, typ, msg string) error {
		return fmt.Errorf("wrapped: %w", &APIError{Status: status, Type: typ, Message: msg, Operation: "updateTable"})
	}
	type preds struct {
		NotFound, Conflict, CommitConflict, AlreadyExists, Unauthorized, Forbidden, Unsupported, Retryable bool
		// The neutral classes of the root package (errors.Is).
		ClassNotFound, ClassConflict bool
	}
	check := func(err error) preds {
		return preds{NotFound: IsNotFound(err), Conflict: IsConflict(err), CommitConflict: IsCommitConflict(err), AlreadyExists: IsAlreadyExists(err), Unauthorized: IsUnauthorized(err),
			Forbidden: IsForbidden(err), Unsupported: IsUnsupportedFormat(err), Retryable: Retryable(err),
			ClassNotFound: errors.Is(err, catalog.ErrNotFound), ClassConflict: errors.Is(err, catalog.ErrConflict)}
	}
	tests := []struct {
		name string
		err  error
		want preds
	}{
		{"404", e(404, "NoSuchTableException", ""), preds{NotFound: true, ClassNotFound: true}},
		{"etag 409", e(409, TypeUpdateRequirementConflict, "assert-etag failed"), preds{Conflict: true, ClassConflict: true}},
		{"uuid 409 classic envelope, no type", e(409, "", "assert-table-uuid failed: expected X"), preds{Conflict: true, ClassConflict: true}},
		{"etag 409 unknown type, message", e(409, "ABORTED", "assert-etag failed"), preds{Conflict: true, ClassConflict: true}},
		{"commit conflict", e(409, TypeCommitVersionConflict, "Commit version already accepted"), preds{CommitConflict: true}},
		{"already exists 409", e(409, TypeAlreadyExists, "Table already exists"), preds{AlreadyExists: true}},
		{"already exists classic 400", e(400, "TABLE_ALREADY_EXISTS", ""), preds{AlreadyExists: true}},
		{"401", e(401, "NotAuthorizedException", ""), preds{Unauthorized: true}},
		{"403", e(403, "PermissionDeniedException", ""), preds{Forbidden: true}},
		{"unsupported format", e(400, TypeUnsupportedTableFormat, "Table is not a Delta table"), preds{Unsupported: true}},
		{"other 400", e(400, "InvalidParameterValueException", "assert-etag"), preds{}},
		{"429", e(429, "ResourceExhaustedException", ""), preds{Retryable: true}},
		{"500", e(500, "CommitStateUnknownException", ""), preds{Retryable: true}},
		{"503", e(503, "", ""), preds{Retryable: true}},
		{"501 not retried", e(501, "NotImplementedException", ""), preds{}},
		{"plain error", errors.New("x"), preds{}},
		{"nil", nil, preds{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, check(tt.err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAPIErrorMessage(t *testing.T) {
	err := &APIError{Status: 404, Type: "NoSuchTableException", Message: "Table not found: c.s.t", Operation: "loadTable"}
	if got, want := err.Error(), "catalog: loadTable: HTTP 404 NoSuchTableException: Table not found: c.s.t"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzParseAPIError(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"m","type":"T","code":409}}`, `{"error_code":"X","message":"m"}`, `{"error":"s"}`,
		`{"error":null}`, `{"error":{"type":1}}`, "<html>", "", `"str"`, `{"message":["x"]}`,
	} {
		f.Add(409, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := parseAPIError(status, body)
		if e == nil || e.Status != status {
			t.Fatalf("status lost: %+v", e)
		}
		if len(e.Message) > maxErrorMessage+len("…") || !utf8.ValidString(e.Message) {
			t.Fatalf("bad message %q", e.Message)
		}
		_ = e.Error()
		// Predicates never panic.
		_, _, _ = IsConflict(e), IsCommitConflict(e), Retryable(e)
	})
}

func FuzzDecodeLoadTableResponse(f *testing.F) {
	f.Add([]byte(`{"metadata":{"etag":"e","table-type":"MANAGED","table-uuid":"u","location":"s3://b/t","created-time":1,"updated-time":2,` +
		`"columns":{"type":"struct","fields":[{"name":"a","type":{"type":"array","element-type":{"type":"map","key-type":"string","value-type":"decimal(3,1)","value-contains-null":true},"contains-null":false},"nullable":true,"metadata":{"k":1}}]},` +
		`"partition-columns":["a"],"properties":{"delta.minReaderVersion":"3"},"last-commit-version":5,"last-commit-timestamp-ms":9},` +
		`"commits":[{"version":5,"timestamp":1,"file-name":"f","file-size":1,"file-modification-timestamp":1}],"latest-table-version":5}`))
	f.Add([]byte(`{"metadata":{"columns":{"type":"struct","fields":[{"name":"x","type":{"type":"decimal","precision":1,"scale":0},"nullable":true,"metadata":{}}]}}}`))
	f.Add([]byte(`{"metadata":{"columns":{"type":"struct","fields":[{"name":"x","type":{"type":"struct","fields":[{"name":"y","type":"void","nullable":true,"metadata":null}]},"nullable":true}]}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var r LoadTableResponse
		if json.Unmarshal(body, &r) != nil {
			return
		}
		// Anything decoded re-encodes, and the re-encoding decodes to the same value.
		b, err := json.Marshal(r)
		if err != nil {
			return // e.g. an empty DataType inside a hand-made struct cannot occur from decoding
		}
		var again LoadTableResponse
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("re-decode: %v\n%s", err, b)
		}
		_ = catalog.UnsupportedTypes(r.Metadata.Columns)
		if _, err := r.Metadata.Columns.SchemaString(); err != nil {
			t.Fatalf("schema string: %v", err)
		}
	})
}
