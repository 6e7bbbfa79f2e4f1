package uc

import "github.com/deltasync/deltasync/catalog"

// refusalError is an error of Send or Register the catalog refused (or
// the client's pre-flight check did): the client's error as it is, with
// the Refusal it carries (AsRefusal) for catalog.AsRefusal to find.
type refusalError struct {
	err error
	rf  catalog.Refusal
}

func (e *refusalError) Error() string { return e.err.Error() }

func (e *refusalError) Unwrap() error { return e.err }

// CatalogRefusal is the refusal: the server's status, type, message and
// operation, or the pre-flight check's reason (PreFlight set), and the
// action it names when it names one.
func (e *refusalError) CatalogRefusal() catalog.Refusal { return e.rf }

// withRefusal returns err, carrying its Refusal when it is one
// (errors.Is(err, catalog.ErrRefused)).
func withRefusal(err error) error {
	if rf, ok := AsRefusal(err); ok {
		return &refusalError{err: err, rf: rf}
	}
	return err
}
