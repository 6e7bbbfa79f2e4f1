package change

import (
	"fmt"
	"net/http"

	"github.com/deltasync/deltasync/catalog"
)

// RefusalText is the reason a refused table is reported with.
func RefusalText(rf catalog.Refusal) string {
	if rf.PreFlight {
		return "refused before sending: " + rf.Message + "; fix the table (or exclude it): the update is not sent while it holds such a value"
	}
	var head string
	switch {
	case rf.Status != 0:
		head = fmt.Sprintf("HTTP %d", rf.Status)
		if t := http.StatusText(rf.Status); t != "" && rf.Type == "" {
			head += " " + t
		}
		if rf.Type != "" {
			head += " " + rf.Type
		}
	default: // a catalog that is no HTTP server (the Hive Metastore)
		head = rf.Type
		if rf.Operation != "" {
			head = rf.Operation + " " + head
		}
	}
	return fmt.Sprintf("refused by the catalog (%s: %s); the same update is refused every time: fix the table (or exclude it); retried after a long backoff", head, rf.Message)
}
