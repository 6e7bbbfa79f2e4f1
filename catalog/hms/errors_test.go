package hms

import (
	"errors"
	"fmt"
	"testing"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
)

// TestErrorsAnswerCatalogClasses: a metastore error answers errors.Is for
// its own sentinel as before and for the catalog root's class of the same
// meaning (what a reconcile over any kind branches on), whether the
// server's exception was classified or a sentinel was wrapped by hand (as
// WriteFrom does); the classes do not leak into one another.
func TestErrorsAnswerCatalogClasses(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         error
		own, class  error
		notAnswered []error
	}{
		{"NoSuchObjectException", &Error{Op: "get_table_req", Table: "hive.d.t", Err: classify(&hm.NoSuchObjectException{Message: "hive.d.t table not found"})},
			ErrNotFound, catalog.ErrNotFound, []error{catalog.ErrConflict, catalog.ErrRefused}},
		{"AlreadyExistsException", &Error{Op: "create_table", Err: classify(&hm.AlreadyExistsException{Message: "Table hive.d.t already exists"})},
			ErrAlreadyExists, catalog.ErrAlreadyExists, []error{catalog.ErrConflict, catalog.ErrNotFound}},
		{"guard failed", &Error{Op: "alter_table_with_environment_context", Err: classify(&hm.MetaException{Message: conflictPrefix + "delta.lastUpdateVersion' is '5'. The expected was value was '4'"})},
			ErrConflict, catalog.ErrConflict, []error{catalog.ErrRefused, catalog.ErrNotFound}},
		{"lock timeout", &Error{Op: "lock", Err: fmt.Errorf("%w: %w", ErrConflict, ErrLockTimeout)},
			ErrConflict, catalog.ErrConflict, []error{catalog.ErrRefused}},
		{"InvalidOperationException", &Error{Op: "alter_table_with_environment_context", Err: classify(&hm.InvalidOperationException{Message: "The following columns have types incompatible"})},
			ErrRefused, catalog.ErrRefused, []error{catalog.ErrConflict, catalog.ErrUnsupported}},
	} {
		if !errors.Is(tc.err, tc.own) {
			t.Errorf("%s: %v does not answer %v", tc.name, tc.err, tc.own)
		}
		if !errors.Is(tc.err, tc.class) {
			t.Errorf("%s: %v does not answer %v", tc.name, tc.err, tc.class)
		}
		for _, no := range tc.notAnswered {
			if errors.Is(tc.err, no) {
				t.Errorf("%s: %v answers %v", tc.name, tc.err, no)
			}
		}
	}
	if other := fmt.Errorf("another kind's conflict: %w", catalog.ErrConflict); errors.Is(other, ErrConflict) {
		t.Error("catalog.ErrConflict answers hms.ErrConflict: the class is wider than the sentinel")
	}
	if got := (&Error{Op: "get_table_req", Table: "hive.d.t", Err: fmt.Errorf("%w: the reply holds no table", ErrNotFound)}).Error(); got != "hms: get_table_req hive.d.t: not found: the reply holds no table" {
		t.Errorf("message %q changed", got)
	}
}
