package uctest

import (
	"strings"
	"testing"
)

// NewForTest starts a server for t, closes it in t.Cleanup and fails t if
// any request or response broke the API definitions.
func NewForTest(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := NewServer(opts...)
	t.Cleanup(func() {
		s.Close()
		if v := s.Violations(); len(v) > 0 {
			t.Errorf("uctest: %d API definition violation(s):\n  %s", len(v), strings.Join(v, "\n  "))
		}
	})
	return s
}
