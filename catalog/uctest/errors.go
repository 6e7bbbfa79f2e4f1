package uctest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// apiError is an error the handlers turn into a response: the Delta envelope
// on /delta/v1 paths, the classic one elsewhere.
type apiError struct {
	Status  int
	Type    string // Delta error type, e.g. NoSuchTableException
	Code    string // classic error_code, e.g. TABLE_NOT_FOUND
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

func errf(status int, typ, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Type: typ, Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *apiError {
	return errf(http.StatusBadRequest, "InvalidParameterValueException", "INVALID_ARGUMENT", format, args...)
}

func conflict(format string, args ...any) *apiError {
	return errf(http.StatusConflict, "UpdateRequirementConflictException", "UPDATE_REQUIREMENT_CONFLICT", format, args...)
}

func commitConflict(format string, args ...any) *apiError {
	return errf(http.StatusConflict, "CommitVersionConflictException", "COMMIT_VERSION_CONFLICT", format, args...)
}

func catalogNotFound(c string) *apiError {
	return errf(http.StatusNotFound, "NoSuchCatalogException", "CATALOG_NOT_FOUND", "Catalog not found: %s", c)
}

func schemaNotFound(full string) *apiError {
	return errf(http.StatusNotFound, "NoSuchSchemaException", "SCHEMA_NOT_FOUND", "Schema not found: %s", full)
}

func tableNotFound(full string) *apiError {
	return errf(http.StatusNotFound, "NoSuchTableException", "TABLE_NOT_FOUND", "Table not found: %s", full)
}

func unsupportedFormat(full string) *apiError {
	return errf(http.StatusBadRequest, "UnsupportedTableFormatException", "UNSUPPORTED_TABLE_FORMAT", "Table is not a Delta table: %s", full)
}

// typeForStatus picks a Delta error type for an injected failure.
func typeForStatus(status int) string {
	switch status {
	case 400:
		return "InvalidParameterValueException"
	case 401:
		return "NotAuthorizedException"
	case 403:
		return "PermissionDeniedException"
	case 404:
		return "NotFoundException"
	case 409:
		return "UpdateRequirementConflictException"
	case 429:
		return "TooManyRequestsException"
	case 501:
		return "NotImplementedException"
	default:
		return "InternalServerErrorException"
	}
}

// codeForStatus picks a classic error_code for an injected failure.
func codeForStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	default:
		return "INTERNAL"
	}
}

func isDeltaPath(p string) bool { return strings.Contains(p, "/delta/v1/") }

// writeError renders e in the envelope the path's API uses. HEAD answers have
// no body.
func writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	if r.Method == http.MethodHead {
		w.WriteHeader(e.Status)
		return
	}
	if isDeltaPath(r.URL.Path) {
		typ := e.Type
		if typ == "" {
			typ = typeForStatus(e.Status)
		}
		writeJSON(w, e.Status, map[string]any{"error": map[string]any{
			"message": e.Message, "type": typ, "code": e.Status,
		}})
		return
	}
	code := e.Code
	if code == "" {
		code = codeForStatus(e.Status)
	}
	writeJSON(w, e.Status, map[string]any{
		"error_code": code,
		"message":    e.Message,
		"details": []any{map[string]any{
			"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
			"reason": code,
		}},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"marshal failed","type":"InternalServerErrorException","code":500}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	// As the real server (Armeria) does for a JSON answer it holds whole.
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeNoRoute answers a request no handler serves the way the server's HTTP
// framework (Armeria) does: plain text, no JSON envelope.
func writeNoRoute(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, "Status: %d\nDescription: %s", status, http.StatusText(status))
}
