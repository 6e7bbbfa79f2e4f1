package contract

import (
	"os"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/internal/testenv"
)

func TestContractUCTest(t *testing.T) {
	spectest.RequireDefaultSpec(t)
	srv := spectest.NewServer()
	defer srv.Close()
	Run(t, srv.URL(), WithViolationHeader(uctest.ExpectViolationHeader))
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("API definition violations:\n%v", v)
	}
	// The suite sends two malformed requests on purpose: an unknown update
	// action and an unknown field.
	want := []string{`unknown update action "set-owner"`, `unrecognized field(s) "updates[0].extra"`}
	got := srv.ExpectedViolations()
	if len(got) != len(want) {
		t.Fatalf("expected violations %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("expected violation %d = %q, want it to mention %q", i, got[i], want[i])
		}
	}
}

func TestContractRealServer(t *testing.T) {
	// The real server is not published on Maven Central, so CI cannot
	// install it: DELTASYNC_REQUIRE_UC (not _EXTERNAL) makes it mandatory.
	url := testenv.Getenv(t, "DELTASYNC_UC_URL", testenv.UC,
		"DELTASYNC_UC_URL is not set; `make uc-up` starts a real Unity Catalog server")
	Run(t, url, WithToken(os.Getenv("DELTASYNC_UC_TOKEN")))
}

func TestContractUCTestClusteringRefused(t *testing.T) {
	srv := spectest.NewServer(uctest.WithClusteringUpdatesRefused())
	defer srv.Close()
	RunClusteringRefused(t, srv.URL())
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("API definition violations:\n%v", v)
	}
}

func TestContractUCTestColumnRenameGuards(t *testing.T) {
	srv := spectest.NewServer(uctest.WithColumnRenameGuards())
	defer srv.Close()
	RunColumnRenameGuards(t, srv.URL())
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("API definition violations:\n%v", v)
	}
}
