package contract

import (
	"os"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
)

func TestContractUCTest(t *testing.T) {
	srv := uctest.NewServer()
	defer srv.Close()
	Run(t, srv.URL(), WithViolationHeader(uctest.ExpectViolationHeader))
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("API definition violations:\n%v", v)
	}
	if v := srv.ExpectedViolations(); len(v) != 1 {
		t.Errorf("the suite sends one request the definitions forbid (unknown action); uctest recorded %d: %v", len(v), v)
	}
}

func TestContractRealServer(t *testing.T) {
	url := os.Getenv("DELTASYNC_UC_URL")
	if url == "" {
		if os.Getenv("DELTASYNC_REQUIRE_EXTERNAL") == "1" {
			t.Fatal("DELTASYNC_UC_URL is not set (start a server with `make uc-up` or .ci/setup-uc.sh)")
		}
		t.Skip("DELTASYNC_UC_URL is not set; `make uc-up` starts a real Unity Catalog server")
	}
	Run(t, url, WithToken(os.Getenv("DELTASYNC_UC_TOKEN")))
}
