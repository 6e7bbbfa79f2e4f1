package glue

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/deltasync/deltasync/catalog"
)

// Sentinels, matched with errors.Is on an *Error. Each wraps the neutral
// class of the catalog root it belongs to (errors.Is(err,
// catalog.ErrConflict) holds for ErrConflict, and so on).
var (
	// ErrConflict: UpdateTable's VersionId was not the table's current one
	// (Glue's ConcurrentModificationException): another writer updated the
	// table since it was read. Read again and re-plan.
	ErrConflict = fmt.Errorf("glue: concurrent modification (VersionId guard failed): %w", catalog.ErrConflict)
	// ErrNotFound: the database or table does not exist (EntityNotFoundException).
	ErrNotFound = fmt.Errorf("glue: %w", catalog.ErrNotFound)
	// ErrRefused: Glue will not take the request as it stands
	// (InvalidInputException, ValidationException, AccessDeniedException,
	// ResourceNumberLimitExceededException); RefusalOf reports it.
	ErrRefused = fmt.Errorf("glue: %w", catalog.ErrRefused)
	// ErrOutcomeUnknown: an UpdateTable whose outcome only a read can tell
	// (Client.Update: an attempt's answer lost, and the resend's guard
	// failed).
	ErrOutcomeUnknown = fmt.Errorf("glue: %w", catalog.ErrOutcomeUnknown)
	// ErrAlreadyExists: CreateDatabase / CreateTable of a name in use
	// (AlreadyExistsException).
	ErrAlreadyExists = fmt.Errorf("glue: %w", catalog.ErrAlreadyExists)
)

// refused are the error codes that mean "the same request gets the same
// answer": a bad value, a missing grant, a quota. Throttling and 5xx are
// not here: the SDK's retryer retries them, and what is left after its
// attempts is a plain (transient) error.
var refused = map[string]bool{
	"InvalidInputException":                true,
	"ValidationException":                  true,
	"AccessDeniedException":                true,
	"ResourceNumberLimitExceededException": true,
}

// Error is a failed Glue call: Op is the operation ("UpdateTable"), Table
// what it was about ("db.table", or "db" for a database call; empty for
// account-wide calls), Err the cause: the SDK's error, joined with the
// sentinel it maps to (errors.As still finds the SDK's typed error, e.g.
// *types.ConcurrentModificationException).
type Error struct {
	Op    string
	Table string
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("glue: " + e.Op)
	if e.Table != "" {
		b.WriteString(" " + e.Table)
	}
	b.WriteString(": " + strings.TrimPrefix(e.Err.Error(), "glue: "))
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// kindError joins a sentinel with the SDK's error.
type kindError struct {
	kind  error
	cause error
	msg   string
}

func (e *kindError) Error() string   { return e.kind.Error() + ": " + e.msg }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.cause} }

// wrap turns an SDK error of operation op into an *Error (nil stays nil).
func wrap(op, table string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Table: table, Err: classify(err)}
}

func classify(err error) error {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return err
	}
	msg := api.ErrorCode() + ": " + api.ErrorMessage()
	switch c := api.ErrorCode(); {
	case c == "ConcurrentModificationException":
		return &kindError{ErrConflict, err, msg}
	case c == "EntityNotFoundException":
		return &kindError{ErrNotFound, err, msg}
	case c == "AlreadyExistsException":
		return &kindError{ErrAlreadyExists, err, msg}
	case refused[c]:
		return &kindError{ErrRefused, err, msg}
	}
	return err
}

// RefusalOf reports a refused call (errors.Is(err, ErrRefused)) as the
// catalog root's Refusal: Glue's HTTP status, error code, message and the
// operation. ok is false for any other error.
func RefusalOf(err error) (r catalog.Refusal, ok bool) {
	var (
		e   *Error
		api smithy.APIError
	)
	if !errors.Is(err, ErrRefused) || !errors.As(err, &e) || !errors.As(err, &api) {
		return r, false
	}
	r = catalog.Refusal{Status: http.StatusBadRequest, Type: api.ErrorCode(), Message: api.ErrorMessage(), Operation: e.Op}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		r.Status = re.HTTPStatusCode()
	}
	return r, true
}
