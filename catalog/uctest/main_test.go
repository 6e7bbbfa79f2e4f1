package uctest

import (
	"fmt"
	"os"
	"testing"
)

// testSpec is loaded once for the whole test binary (see newTestServer).
var testSpec *Spec

func TestMain(m *testing.M) {
	dir, err := DefaultSpecDir()
	if err == nil {
		testSpec, err = LoadSpec(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// newTestServer is NewForTest sharing the spec loaded in TestMain, the way
// other packages' tests should use uctest when they start many servers.
func newTestServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	return NewForTest(t, append([]Option{WithSpec(testSpec)}, opts...)...)
}
