package uc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
)

// A write resent after an attempt the server may have acted on (a 5xx
// here) and then answered 409 — what the identical resend of an applied
// update gets — says its outcome is unknown (ErrOutcomeUnknown) while
// still being a conflict; after a 429, which the server did not act on,
// the 409 is the whole story. Before, both came back as a plain 409, and
// the caller recorded the applied write as refused.
func TestResentWriteSaysItsOutcomeIsUnknown(t *testing.T) {
	for _, c := range []struct {
		first   int
		unknown bool
	}{{503, true}, {500, true}, {429, false}} {
		t.Run(fmt.Sprint(c.first), func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if n.Add(1) == 1 {
					w.WriteHeader(c.first)
					fmt.Fprintf(w, `{"error":{"message":"first","type":"X","code":%d}}`, c.first)
					return
				}
				w.WriteHeader(409)
				fmt.Fprint(w, `{"error":{"message":"assert-etag failed","type":"UpdateRequirementConflictException","code":409}}`)
			}))
			defer srv.Close()
			cl, err := uc.New(srv.URL+"/api/2.1/unity-catalog", uc.Options{
				Retry: uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = cl.UpdateTable(context.Background(), catalog.TableName{Catalog: "a", Schema: "b", Table: "c"}, uc.UpdateTableRequest{
				Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: "u"}, uc.AssertEtag{Etag: "e"}},
				Updates:      []uc.Update{uc.SetProperties{Updates: map[string]string{"k": "v"}}},
			})
			if !uc.IsConflict(err) {
				t.Fatalf("err = %v, want the 409", err)
			}
			if got := errors.Is(err, uc.ErrOutcomeUnknown); got != c.unknown {
				t.Errorf("after a %d: ErrOutcomeUnknown = %v, want %v (%v)", c.first, got, c.unknown, err)
			}
			// A read is never marked: it changes nothing.
			n.Store(0)
			if _, err := cl.LoadTable(context.Background(), catalog.TableName{Catalog: "a", Schema: "b", Table: "c"}); errors.Is(err, uc.ErrOutcomeUnknown) {
				t.Errorf("a read says its outcome is unknown: %v", err)
			}
		})
	}
}
