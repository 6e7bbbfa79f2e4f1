// Package testenv decides, for tests only, what happens when something a
// test needs from outside the repository is missing (a real Unity Catalog
// server, a service a .ci/setup-*.sh script starts, a tool on PATH), and
// which tests the one switch, -short, leaves out.
//
// The rule, in one place: a missing part skips the test, unless its
// requirement variable is "1" — .ci/test.sh sets DELTASYNC_REQUIRE_UC and
// DELTASYNC_REQUIRE_EXTERNAL in CI — when it fails instead, so CI can never
// pass by skipping. The integration and fault suites (Suite) run by
// default and in CI; `go test -short` skips them.
package testenv

import (
	"net"
	"os"
	"strconv"
	"testing"
)

// The requirement variables: set to "1", a missing part fails the test.
const (
	UC       = "DELTASYNC_REQUIRE_UC"       // the real Unity Catalog server (DELTASYNC_UC_URL)
	External = "DELTASYNC_REQUIRE_EXTERNAL" // every other outside part
)

// Required reports whether the requirement variable req is "1".
func Required(req string) bool { return os.Getenv(req) == "1" }

// Missing skips t because a part is missing (why says which and how to
// get it), or fails t when req is required.
func Missing(t testing.TB, req, why string) {
	t.Helper()
	if Required(req) {
		t.Fatal(why + " (" + req + "=1)")
	}
	t.Skip(why)
}

// Fallback is for a test that runs against a stand-in (uctest) when a
// part is missing: it fails t when req is required, and otherwise returns.
func Fallback(t testing.TB, req, why string) {
	t.Helper()
	if Required(req) {
		t.Fatal(why + " (" + req + "=1)")
	}
}

// Getenv returns the environment variable name, or when it is unset calls
// Missing(t, req, why).
func Getenv(t testing.TB, name, req, why string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		Missing(t, req, why)
	}
	return v
}

// Suite marks t as part of an integration or fault suite (slow: real
// services, injected faults, built binaries): it is skipped under -short
// and runs otherwise, as in CI.
func Suite(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: integration and fault suites run without -short (as CI does)")
	}
}

// FreeAddr returns a 127.0.0.1 address whose port was free a moment ago,
// for a server a test starts by address (a daemon's --listen, a proxy).
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// FreePort is FreeAddr's port.
func FreePort(t testing.TB) uint16 {
	t.Helper()
	_, p, err := net.SplitHostPort(FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	return uint16(n)
}
