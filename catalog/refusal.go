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
	// can tell (a pre-flight refusal always; see RefusedAction).
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
			r.Type = TypeValueTooLong
		}
		return r, true
	}
	return Refusal{Type: "refused", Message: err.Error()}, true
}

// RefusedAction names the one update action of req a refusal is about, or
// "" when it cannot be told: the pre-flight check's action, or an action
// the server's message names (UC's validation messages start with the
// path of the bad value: "columns.fields[1]…", "partition-columns …";
// Databricks refuses "Update to Delta domain metadata delta.clustering").
func RefusedAction(r Refusal, req UpdateTableRequest) string {
	has := map[string]bool{}
	for _, u := range req.Updates {
		if u != nil {
			has[u.Action()] = true
		}
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
	case strings.Contains(m, "domain metadata") || strings.Contains(m, "set-domain-metadata"):
		a = "set-domain-metadata"
	case strings.Contains(m, "partition-columns"):
		a = "set-partition-columns"
	case strings.HasPrefix(m, "columns") || strings.Contains(m, "set-columns") || strings.Contains(m, "Duplicate field name") ||
		strings.Contains(m, "NAME CHARACTER VARYING") || strings.Contains(m, "column mapping") || strings.Contains(m, "column rename"):
		a = "set-columns"
	case strings.Contains(m, "PROPERTY_KEY") || strings.Contains(m, "PROPERTY_VALUE") || strings.Contains(m, "set-properties"):
		a = "set-properties"
	case strings.Contains(m, "set-protocol"):
		a = "set-protocol"
	case strings.Contains(m, "set-table-comment"):
		a = "set-table-comment"
	}
	if has[a] {
		return a
	}
	return ""
}
