package uc

import (
	"errors"
	"net/http"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// Is places e in the root package's error classes: errors.Is(e,
// catalog.ErrRefused) holds for a refusal (see catalog.ErrRefused),
// errors.Is(e, catalog.ErrConflict) where IsConflict holds (a failed
// assert-table-uuid or assert-etag, not a commit-version conflict) and
// errors.Is(e, catalog.ErrNotFound) where IsNotFound holds and
// errors.Is(e, catalog.ErrAlreadyExists) where IsAlreadyExists does.
func (e *APIError) Is(target error) bool {
	switch target {
	case catalog.ErrRefused:
		return e.refused()
	case catalog.ErrConflict:
		return e.conflict()
	case catalog.ErrNotFound:
		return e.Status == http.StatusNotFound
	case catalog.ErrAlreadyExists:
		return e.alreadyExists()
	}
	return false
}

func (e *APIError) refused() bool {
	if e.Status == http.StatusInternalServerError {
		return isValueTooLong(e.Message)
	}
	if e.Status < 400 || e.Status >= 500 {
		return false
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return false
	}
	return true
}

func isValueTooLong(msg string) bool { return strings.Contains(msg, "Value too long for column") }

// AsRefusal returns the refusal err carries, if errors.Is(err, catalog.ErrRefused).
func AsRefusal(err error) (catalog.Refusal, bool) {
	if !errors.Is(err, catalog.ErrRefused) {
		return catalog.Refusal{}, false
	}
	var le *LimitError
	if errors.As(err, &le) {
		return catalog.Refusal{Type: catalog.TypeValueTooLong, Message: le.Error(), Operation: le.Operation, PreFlight: true, Action: le.Action}, true
	}
	if e, ok := asAPIError(err); ok {
		r := catalog.Refusal{Status: e.Status, Type: e.Type, Message: e.Message, Operation: e.Operation}
		if e.Status == http.StatusInternalServerError {
			r.Type = catalog.TypeValueTooLong // the database's message: it names the table, never an action
		} else {
			r.Action = ServerNamedAction(e.Message)
		}
		return r, true
	}
	return catalog.Refusal{Type: "refused", Message: err.Error()}, true
}

// ServerNamedAction returns the update action a Unity Catalog error
// message names, or "" when it names none or more than one. Neither of
// UC's error envelopes has a field for it (the Delta one carries message,
// type and code; the classic one error_code, message and details, whose
// google.rpc.ErrorInfo reason repeats error_code), so the message is
// where the server says it, in two forms:
//   - the action's own name: "Unknown domain in remove-domain-metadata:
//     nope";
//   - the request path of the bad value, which UC's validation writes
//     into its messages: "columns.fields[0].name is required.",
//     "Duplicate field name (case-insensitive) in columns.fields[1]: ID",
//     "partition-columns references unknown column: nope".
//
// Only the message's head, before its first ": ", is read: what follows
// is the refused value (a column's name, a property key), which the table's
// writer chose and which may spell anything. A head naming two actions
// ("set-properties and remove-properties overlap on keys") names none: the
// request's shape is refused, not one of its actions.
func ServerNamedAction(msg string) string {
	head, _, _ := strings.Cut(msg, ": ")
	named := ""
	for _, w := range strings.Fields(head) {
		w = strings.Trim(w, `:;,."'()`)
		a := ""
		switch {
		case updateActions[w]:
			a = w
		case w == "columns" || strings.HasPrefix(w, "columns.") || strings.HasPrefix(w, "columns["):
			a = "set-columns"
		case w == "partition-columns" || strings.HasPrefix(w, "partition-columns["):
			a = "set-partition-columns"
		}
		if a == "" {
			continue
		}
		if named != "" && named != a {
			return ""
		}
		named = a
	}
	return named
}

// updateActions are the updateTable action names (Update.Action).
var updateActions = map[string]bool{
	"set-columns": true, "set-partition-columns": true, "set-properties": true, "remove-properties": true,
	"set-protocol": true, "set-table-comment": true, "set-domain-metadata": true, "remove-domain-metadata": true,
	"update-metadata-snapshot-version": true, "add-commit": true, "set-latest-backfilled-version": true,
}

// RefusedAction names the one update action of req a refusal is about, or
// "" when it cannot be told: the refusal's Action (the pre-flight check's,
// or the one the server's message names, ServerNamedAction), else, as a
// last resort, an action a known message without a path implies
// (Databricks refuses "Update to Delta domain metadata delta.clustering";
// UC's 500 for a value too wide names the database column, e.g.
// "PROPERTY_KEY CHARACTER VARYING(255)"; the set-columns guards of UC PRs
// #1907/#1909 speak of column mapping and renames).
func RefusedAction(r catalog.Refusal, req UpdateTableRequest) string {
	has := map[string]bool{}
	for _, u := range req.Updates {
		if u != nil {
			has[u.Action()] = true
		}
	}
	if r.Action == "" && r.Status != http.StatusInternalServerError {
		r.Action = ServerNamedAction(r.Message) // a Refusal made elsewhere than AsRefusal
	}
	if r.Action != "" {
		if has[r.Action] {
			return r.Action
		}
		return ""
	}
	m := r.Message
	var a string
	switch {
	case strings.Contains(m, "domain metadata"):
		a = "set-domain-metadata"
	case strings.Contains(m, "Duplicate field name") ||
		strings.Contains(m, "NAME CHARACTER VARYING") || strings.Contains(m, "column mapping") || strings.Contains(m, "column rename"):
		a = "set-columns"
	case strings.Contains(m, "PROPERTY_KEY") || strings.Contains(m, "PROPERTY_VALUE"):
		a = "set-properties"
	}
	if has[a] {
		return a
	}
	return ""
}
