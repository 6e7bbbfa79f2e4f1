package catalog

import (
	"errors"
	"net/http"
	"strings"
)

// ErrRefused means the catalog will not take this request as it stands:
// sending it again unchanged gets the same answer. errors.Is(err,
// ErrRefused) holds for
//   - an *APIError with a 4xx status other than 401, 403, 404, 408, 409
//     and 429 (the server validated the request and said no, e.g. UC's 400
//     InvalidParameterValueException for two columns named id and ID);
//   - an *APIError 500 whose message is the database's "Value too long for
//     column" (UC stores the value in a fixed-width column and has no check
//     of its own, so the same row is refused every time);
//   - a *LimitError: the client's own pre-flight check (CheckLimits) found a
//     value the server is known to refuse, and nothing was sent.
//
// The 4xx statuses left out are not about what the request says: 401 and 403
// are about who sends it (renew the token, grant the privilege: fixed
// outside deltasync, and the next attempt should notice soon), 404 means
// the record went away (the next cycle lists again), 408 is a timeout,
// 409 a concurrent writer and 429 throttling.
var ErrRefused = errors.New("catalog: request refused")

// TypeValueTooLong is the Refusal.Type given to a 500 "Value too long for
// column" and to a LimitError.
const TypeValueTooLong = "ValueTooLong"

// Is makes errors.Is(e, ErrRefused) hold for a refusal (see ErrRefused).
func (e *APIError) Is(target error) bool { return target == ErrRefused && e.refused() }

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

// Refusal is what a refused request is reported with: the server's status,
// error type and message, or (PreFlight) the client's own reason for not
// sending it.
type Refusal struct {
	Status    int    `json:"status,omitempty"`
	Type      string `json:"type"`
	Message   string `json:"message"`
	Operation string `json:"operation,omitempty"`
	PreFlight bool   `json:"pre_flight,omitempty"`
	// Action is the update action the refusal is about, when the client
	// can tell: a pre-flight refusal always, a server's when its message
	// names the action (ServerNamedAction); see RefusedAction.
	Action string `json:"action,omitempty"`
}

// AsRefusal returns the refusal err carries, if errors.Is(err, ErrRefused).
func AsRefusal(err error) (Refusal, bool) {
	if !errors.Is(err, ErrRefused) {
		return Refusal{}, false
	}
	var le *LimitError
	if errors.As(err, &le) {
		return Refusal{Type: TypeValueTooLong, Message: le.Error(), Operation: le.Operation, PreFlight: true, Action: le.Action}, true
	}
	if e, ok := asAPIError(err); ok {
		r := Refusal{Status: e.Status, Type: e.Type, Message: e.Message, Operation: e.Operation}
		if e.Status == http.StatusInternalServerError {
			r.Type = TypeValueTooLong // the database's message: it names the table, never an action
		} else {
			r.Action = ServerNamedAction(e.Message)
		}
		return r, true
	}
	return Refusal{Type: "refused", Message: err.Error()}, true
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
func RefusedAction(r Refusal, req UpdateTableRequest) string {
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
