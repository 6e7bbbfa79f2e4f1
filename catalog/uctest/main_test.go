package uctest_test

import (
	"fmt"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"os"
	"testing"
)

// testSpec is loaded once for the whole test binary (see newTestServer).
var testSpec *spectest.Spec

func TestMain(m *testing.M) {
	dir, err := spectest.DefaultSpecDir()
	if err == nil {
		testSpec, err = spectest.LoadSpec(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// newTestServer is NewForTest sharing the spec loaded in TestMain, the way
// other packages' tests should use uctest when they start many servers.
func newTestServer(t testing.TB, opts ...uctest.Option) *uctest.Server {
	t.Helper()
	return spectest.NewForTest(t, append([]uctest.Option{spectest.WithSpec(testSpec)}, opts...)...)
}
