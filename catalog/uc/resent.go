package uc

import (
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/deltasync/deltasync/catalog"
)

// ErrOutcomeUnknown marks the error of a write request that was sent more
// than once: an earlier attempt failed in a way that leaves unknown whether
// the server acted on it (a timeout, a cut connection, a 5xx). The answer
// the error carries is the last attempt's — a 409 to the identical resend,
// say, when the first attempt was applied — and is not the whole story:
// read the record to learn what happened. errors.As still finds the last
// answer's *APIError (IsConflict and the like see it). Such an error also
// answers errors.Is(err, catalog.ErrOutcomeUnknown).
var ErrOutcomeUnknown = errors.New("catalog: an earlier attempt's outcome is unknown")

// resentError is a write's last error after an earlier attempt whose
// outcome is unknown.
type resentError struct {
	err, earlier error
}

func (e *resentError) Error() string {
	return fmt.Sprintf("%v (resent after an attempt whose outcome is unknown: %v)", e.err, e.earlier)
}

func (e *resentError) Unwrap() error { return e.err }

func (e *resentError) Is(target error) bool {
	return target == ErrOutcomeUnknown || target == catalog.ErrOutcomeUnknown
}

// mayHaveActed reports whether a failed attempt of a write may have been
// acted on by the server: anything but a 429 (throttled before it was
// looked at) and a connection that was never made.
func mayHaveActed(err error) bool {
	if e, ok := asAPIError(err); ok {
		return e.Status != http.StatusTooManyRequests
	}
	var oe *net.OpError
	return !errors.As(err, &oe) || oe.Op != "dial"
}
