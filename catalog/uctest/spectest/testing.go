package spectest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
)

// WithSpec validates against an already loaded Spec (see LoadSpec).
func WithSpec(s *Spec) uctest.Option {
	return uctest.WithValidator(func() (uctest.Validator, error) { return s, nil })
}

// WithSpecDir validates against the API definitions in dir instead of the
// default ../shared/spec beside the module root.
func WithSpecDir(dir string) uctest.Option {
	return uctest.WithValidator(func() (uctest.Validator, error) { return LoadSpec(dir) })
}

// withDefaultSpec validates against DefaultSpecDir's definitions.
func withDefaultSpec() uctest.Option {
	return uctest.WithValidator(func() (uctest.Validator, error) {
		dir, err := DefaultSpecDir()
		if err != nil {
			return nil, fmt.Errorf("%w (or use uctest.WithoutSpecValidation())", err)
		}
		return LoadSpec(dir)
	})
}

// NewServer is uctest.NewServer validating every request and response
// against the API definitions in ../shared/spec unless opts say otherwise
// (WithSpec, WithSpecDir, uctest.WithoutSpecValidation). It panics when the
// definitions cannot be loaded.
func NewServer(opts ...uctest.Option) *uctest.Server {
	return uctest.NewServer(append([]uctest.Option{withDefaultSpec()}, opts...)...)
}

// RequireDefaultSpec fails t with a clear message when the default API
// definitions (../shared/spec) are missing, before NewServer would panic.
func RequireDefaultSpec(t testing.TB) {
	t.Helper()
	if _, err := DefaultSpecDir(); err != nil {
		t.Fatal(err)
	}
}

// newServer is NewServer returning its panic (definitions that cannot be
// loaded) as an error.
func newServer(opts ...uctest.Option) (s *uctest.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return NewServer(opts...), nil
}

// NewForTest starts a server for t (validating as NewServer does), closes it
// in t.Cleanup and fails t if any request or response broke the API
// definitions.
func NewForTest(t testing.TB, opts ...uctest.Option) *uctest.Server {
	t.Helper()
	s, err := newServer(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if v := s.Violations(); len(v) > 0 {
			t.Errorf("uctest: %d API definition violation(s):\n  %s", len(v), strings.Join(v, "\n  "))
		}
	})
	return s
}
