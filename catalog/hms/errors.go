package hms

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/thrift/lib/go/thrift"
	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
)

// Sentinels, matched with errors.Is on an *Error. ErrNotFound,
// ErrAlreadyExists, ErrConflict and ErrRefused also answer errors.Is for
// the catalog root's class of the same name (catalog.ErrNotFound, ...),
// which is what a reconcile over any kind branches on.
var (
	// ErrNotFound: the database or table does not exist
	// (NoSuchObjectException, or a batch read that did not return it).
	ErrNotFound error = &sentinel{"hms: not found", catalog.ErrNotFound}
	// ErrAlreadyExists: create_database / create_table of a name in use.
	ErrAlreadyExists error = &sentinel{"hms: already exists", catalog.ErrAlreadyExists}
	// ErrConflict: a guarded alter's expectation failed — another writer
	// changed the guarded parameter between this client's read and its
	// write. Reload, re-plan, and try again (bounded).
	ErrConflict error = &sentinel{"hms: concurrent modification (guard failed)", catalog.ErrConflict}
	// ErrRefused: the server refused the change itself (InvalidOperationException,
	// e.g. an incompatible column type change); the message is HMS's reason.
	ErrRefused error = &sentinel{"hms: change refused by the metastore", catalog.ErrRefused}
	// ErrUnknownFields: the stored table carries fields this client's IDL
	// does not know; writing it back would drop them, so it is not written.
	ErrUnknownFields = errors.New("hms: table has fields this client cannot carry")
	// ErrUnsupported: the server lacks the call (HMS version drift:
	// "Invalid method name").
	ErrUnsupported = errors.New("hms: call not supported by this metastore")
	// ErrLockTimeout: an EXCLUSIVE table lock stayed WAITING past the wait.
	ErrLockTimeout = errors.New("hms: timed out waiting for the table lock")
)

// sentinel is one of this package's error classes that is also one of the
// catalog root's: errors.Is finds it by identity, and finds class through
// it.
type sentinel struct {
	msg   string
	class error
}

func (e *sentinel) Error() string { return e.msg }

// Is reports whether target is the catalog root's class of e.
func (e *sentinel) Is(target error) bool { return target == e.class }

// Error is a failed metastore call: Op is the Thrift call
// ("get_table_req"), Table the table it was about ("hive.db.t", or "hive.db"
// for a database call; empty for server-wide calls), Err the cause (one of
// the sentinels above wraps the server's exception where it applies).
type Error struct {
	Op    string
	Table string
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("hms: " + e.Op)
	if e.Table != "" {
		b.WriteString(" " + e.Table)
	}
	b.WriteString(": " + strings.TrimPrefix(e.Err.Error(), "hms: "))
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// kindError joins a sentinel with the server's message so errors.Is finds
// the sentinel and Error() shows HMS's own words.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string {
	if e.msg == "" {
		return e.kind.Error()
	}
	return e.kind.Error() + ": " + e.msg
}
func (e *kindError) Unwrap() error { return e.kind }

// conflictPrefix starts both of HMS 4's guard failures: the Java pre-check
// ("... is 'X'. The expected was value was 'Y'") and the atomic UPDATE that
// matched no row ("... is different").
const conflictPrefix = "The table has been modified. The parameter value for key '"

// classify maps a Thrift call's error to a sentinel-wrapped cause.
func classify(err error) error {
	var (
		nso *hm.NoSuchObjectException
		ae  *hm.AlreadyExistsException
		me  *hm.MetaException
		ioe *hm.InvalidOperationException
		ioo *hm.InvalidObjectException
		app thrift.TApplicationException
	)
	switch {
	case errors.As(err, &nso):
		return &kindError{ErrNotFound, nso.GetMessage()}
	case errors.As(err, &ae):
		return &kindError{ErrAlreadyExists, ae.GetMessage()}
	case errors.As(err, &me):
		if strings.HasPrefix(me.GetMessage(), conflictPrefix) {
			return &kindError{ErrConflict, me.GetMessage()}
		}
		return fmt.Errorf("MetaException: %s", me.GetMessage())
	case errors.As(err, &ioe):
		return &kindError{ErrRefused, ioe.GetMessage()}
	case errors.As(err, &ioo):
		return &kindError{ErrRefused, ioo.GetMessage()}
	case errors.As(err, &app) && app.TypeId() == thrift.UNKNOWN_METHOD:
		return &kindError{ErrUnsupported, app.Error()}
	}
	return err
}

// healthy reports whether the connection is still in step after err: the
// server answered with an exception (the reply was read whole), or nothing
// failed. Anything else (a timeout, a reset, a half-read reply) poisons it.
func healthy(err error) bool {
	if err == nil {
		return true
	}
	var (
		app thrift.TApplicationException
		tex interface{ TExceptionType() thrift.TExceptionType }
	)
	if errors.As(err, &app) {
		return true
	}
	if errors.As(err, &tex) && tex.TExceptionType() == thrift.TExceptionTypeCompiled {
		return true
	}
	return false
}
