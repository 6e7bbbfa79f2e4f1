package catalog

import "errors"

// ErrRefused means the catalog will not take this request as it stands:
// sending it again unchanged gets the same answer. A catalog kind's errors
// answer errors.Is(err, ErrRefused) for such answers only; for Unity
// Catalog (catalog/uc) it holds for
//   - a *uc.APIError with a 4xx status other than 401, 403, 404, 408, 409
//     and 429 (the server validated the request and said no, e.g. UC's 400
//     InvalidParameterValueException for two columns named id and ID);
//   - a *uc.APIError 500 whose message is the database's "Value too long for
//     column" (UC stores the value in a fixed-width column and has no check
//     of its own, so the same row is refused every time);
//   - a *uc.LimitError: the client's own pre-flight check (uc.Limits) found
//     a value the server is known to refuse, and nothing was sent.
//
// The 4xx statuses left out are not about what the request says: 401 and 403
// are about who sends it (renew the token, grant the privilege: fixed
// outside deltasync, and the next attempt should notice soon), 404 means
// the record went away (the next cycle lists again), 408 is a timeout,
// 409 a concurrent writer and 429 throttling.
var ErrRefused = errors.New("catalog: request refused")

// TypeValueTooLong is the Refusal.Type given to a value wider than the
// catalog stores (Unity Catalog's 500 "Value too long for column", and
// catalog/uc's pre-flight LimitError).
const TypeValueTooLong = "ValueTooLong"

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
	// names the action (catalog/uc's ServerNamedAction and RefusedAction).
	Action string `json:"action,omitempty"`
}

// AsRefusal returns the Refusal a kind's error carries: a kind's refusal
// errors implement CatalogRefusal() Refusal.
func AsRefusal(err error) (Refusal, bool) {
	var r interface{ CatalogRefusal() Refusal }
	if errors.As(err, &r) {
		return r.CatalogRefusal(), true
	}
	return Refusal{}, false
}
