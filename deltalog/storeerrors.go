package deltalog

import (
	"errors"
	"strings"
)

// Storage failures a user can act on are reported as what went wrong and
// what to do, not as the driver's raw text (an S3 NoSuchBucket used to
// surface as "not a Delta table", a missing region as "region was not a
// valid DNS name"). The driver's error stays in the chain and in the text.
var (
	// ErrBucketNotFound: the bucket or container named by the URL does not exist.
	ErrBucketNotFound = errors.New("bucket does not exist")
	// ErrAccessDenied: the store refused the credentials in use.
	ErrAccessDenied = errors.New("access denied")
	// ErrNoCredentials: no credentials could be found for the store.
	ErrNoCredentials = errors.New("no credentials")
	// ErrRegion: the S3 region is missing or wrong for the bucket.
	ErrRegion = errors.New("S3 region missing or wrong")
)

// StoreError is a classified storage failure: Kind is one of the
// sentinels above, Hint says what to do, Err is the driver's error.
type StoreError struct {
	Kind error
	Hint string
	Err  error
}

func (e *StoreError) Error() string {
	return e.Kind.Error() + ": " + e.Hint + " (" + e.Err.Error() + ")"
}

// Unwrap exposes both the kind (errors.Is) and the driver error
// (gcerrors.Code, errors.As).
func (e *StoreError) Unwrap() []error { return []error{e.Kind, e.Err} }

// storeClassifiers recognise one driver's errors; each driver file adds
// its own from init, so a build without a driver carries none of it.
var storeClassifiers []func(error) *StoreError

// classifyStoreError returns err as a *StoreError when a driver recognises
// it, else err unchanged.
func classifyStoreError(err error) error {
	if err == nil {
		return nil
	}
	var se *StoreError
	if errors.As(err, &se) {
		return err
	}
	for _, c := range storeClassifiers {
		if se := c(err); se != nil {
			return se
		}
	}
	return err
}

// containsAny reports whether s contains any of the substrings.
func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
