package uc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// ErrNoDeltaAPI means the server has no Delta API (GET /delta/v1/config
// answered 404 without naming a missing catalog). Callers fall back to the
// classic API in read-only mode.
var ErrNoDeltaAPI = errors.New("catalog: server has no Delta API")

// ErrProtocolVersion means the server answered a Delta API protocol version
// this client did not offer.
var ErrProtocolVersion = errors.New("catalog: unsupported Delta API protocol version")

// ErrListBound means a listing broke a bound the client sets on what one
// listing may cost (Options.MaxListEntries, MaxListPageBytes, a page
// holding more entries than max_results asked for, a repeated or oversized
// page token). The error names the listing and the bound; it is not
// retried.
var ErrListBound = errors.New("catalog: listing exceeds its bound")

// ErrStalled means an attempt made no progress for Options.IdleTimeout:
// the server sent no byte in that time. It is retried like a timeout.
var ErrStalled = errors.New("catalog: server stalled")

// Error types of the Delta API's envelope that this package branches on.
const (
	TypeUpdateRequirementConflict = "UpdateRequirementConflictException"
	TypeCommitVersionConflict     = "CommitVersionConflictException"
	TypeAlreadyExists             = "AlreadyExistsException"
	TypeUnsupportedTableFormat    = "UnsupportedTableFormatException"
	TypeNoSuchCatalog             = "NoSuchCatalogException"
)

// APIError is a non-2xx answer from the catalog. Type is the Delta envelope's
// `type` (e.g. "NoSuchTableException") or the classic envelope's
// `error_code` (e.g. "TABLE_NOT_FOUND"); Message is the server's message, or
// the trimmed body when it was not JSON. Operation is the API operationId,
// e.g. "loadTable". APIError never holds the bearer token.
type APIError struct {
	Status    int
	Type      string
	Message   string
	Operation string
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("catalog: ")
	if e.Operation != "" {
		b.WriteString(e.Operation + ": ")
	}
	fmt.Fprintf(&b, "HTTP %d", e.Status)
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// maxErrorMessage bounds the message kept from an error body.
const maxErrorMessage = 1024

// parseAPIError builds an APIError from a status and a response body. It
// understands the Delta envelope {"error":{"message","type","code"}} and the
// classic one {"error_code","message","details"}; anything else becomes the
// trimmed body text.
func parseAPIError(status int, body []byte) *APIError {
	e := &APIError{Status: status}
	var env struct {
		Error     json.RawMessage `json:"error"`
		ErrorCode string          `json:"error_code"`
		Message   string          `json:"message"`
	}
	if json.Unmarshal(body, &env) == nil {
		var delta struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		switch {
		case len(env.Error) > 0 && json.Unmarshal(env.Error, &delta) == nil && (delta.Type != "" || delta.Message != ""):
			e.Type, e.Message = delta.Type, delta.Message
		case env.ErrorCode != "" || env.Message != "":
			e.Type, e.Message = env.ErrorCode, env.Message
		case len(env.Error) > 0:
			var s string
			if json.Unmarshal(env.Error, &s) == nil {
				e.Message = s
			}
		}
		if e.Type != "" || e.Message != "" {
			e.Message = trimMessage(e.Message)
			return e
		}
	}
	e.Message = trimMessage(string(body))
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// trimMessage collapses whitespace, drops invalid UTF-8 and bounds the length.
func trimMessage(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxErrorMessage {
		cut := maxErrorMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func asAPIError(err error) (*APIError, bool) {
	var e *APIError
	ok := errors.As(err, &e)
	return e, ok
}

func hasStatus(err error, status int) bool {
	e, ok := asAPIError(err)
	return ok && e.Status == status
}

// IsNotFound reports a 404 (missing catalog, schema or table);
// errors.Is(err, catalog.ErrNotFound) says the same.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsUnauthorized reports a 401 (token missing or invalid).
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsForbidden reports a 403 (principal lacks a privilege).
func IsForbidden(err error) bool { return hasStatus(err, http.StatusForbidden) }

// IsConflict reports a 409 UpdateRequirementConflict: assert-etag or
// assert-table-uuid failed (or the row lock timed out). Reload and re-plan.
// errors.Is(err, catalog.ErrConflict) says the same.
func IsConflict(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.conflict()
}

func (e *APIError) conflict() bool {
	if e.Status != http.StatusConflict {
		return false
	}
	switch e.Type {
	case TypeUpdateRequirementConflict:
		return true
	case TypeCommitVersionConflict, TypeAlreadyExists:
		return false
	}
	return strings.Contains(e.Message, "assert-etag") || strings.Contains(e.Message, "assert-table-uuid")
}

// IsCommitConflict reports a 409 CommitVersionConflict.
func IsCommitConflict(err error) bool {
	e, ok := asAPIError(err)
	if !ok || e.Status != http.StatusConflict {
		return false
	}
	return e.Type == TypeCommitVersionConflict ||
		(e.Type == "" && strings.Contains(e.Message, "Commit version already accepted"))
}

// IsAlreadyExists reports that a name is taken: 409 AlreadyExistsException
// (Delta API) or an *_ALREADY_EXISTS error code (classic API, status 400).
// errors.Is(err, catalog.ErrAlreadyExists) says the same.
func IsAlreadyExists(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.alreadyExists()
}

func (e *APIError) alreadyExists() bool {
	return (e.Status == http.StatusConflict && e.Type == TypeAlreadyExists) ||
		strings.HasSuffix(e.Type, "_ALREADY_EXISTS")
}

// IsUnsupportedFormat reports 400 UnsupportedTableFormatException: the table
// is not a Delta table; use the classic API for it.
func IsUnsupportedFormat(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.Status == http.StatusBadRequest && e.Type == TypeUnsupportedTableFormat
}
