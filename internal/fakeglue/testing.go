package fakeglue

import (
	"testing"

	"github.com/deltasync/deltasync/internal/testenv"
)

// MotoURLEnv is the variable .ci/setup-moto.sh exports: moto's URL.
const MotoURLEnv = "DELTASYNC_MOTO_URL"

// MotoPythonEnv is the variable .ci/setup-moto.sh exports: the python of
// moto's venv, which has boto3.
const MotoPythonEnv = "DELTASYNC_MOTO_PYTHON"

// MotoURL is moto's URL for an integration test: the test is marked a
// suite (skipped under -short) and skips when moto is not running, or
// fails when DELTASYNC_REQUIRE_EXTERNAL=1 (CI).
func MotoURL(t testing.TB) string {
	t.Helper()
	testenv.Suite(t)
	return testenv.Getenv(t, MotoURLEnv, testenv.External,
		MotoURLEnv+" unset: start moto with `eval \"$(.ci/setup-moto.sh start)\"`")
}

// Start starts a proxy in front of moto (MotoURL) for the test; it is
// closed when the test ends.
func Start(t testing.TB) *Proxy {
	t.Helper()
	p, err := New(MotoURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}
