package fakeglue

import (
	"net/http"
	"sync"
)

// Fault is an error the proxy answers instead of forwarding a request, in
// Glue's awsJson1_1 error shape (the X-Amzn-ErrorType header and the body
// {"__type": Type, "message": Message}), which the AWS SDK turns into the
// typed error of that code (e.g. *types.AccessDeniedException).
type Fault struct {
	Type    string
	Message string
	// Status is the HTTP status (0: 400, what Glue answers for every
	// modelled client error, throttling included).
	Status int
	// Times is how many requests in a row get it (0: one).
	Times int
}

func (f Fault) status() int {
	if f.Status == 0 {
		return http.StatusBadRequest
	}
	return f.Status
}

// The faults Glue's API reference lists for the catalog calls, with the
// messages AWS sends (quoted in glue-notes §5 from AWS's knowledge center
// and SDK reports).
var (
	AccessDenied = Fault{Type: "AccessDeniedException",
		Message: "User: arn:aws:iam::123456789012:user/deltasync is not authorized to perform: glue:UpdateTable"}
	Throttling                  = Fault{Type: "ThrottlingException", Message: "Rate exceeded"}
	ResourceNumberLimitExceeded = Fault{Type: "ResourceNumberLimitExceededException",
		Message: "Number of TABLE_VERSION resources exceeds the limit 100000 per TABLE"}
	EntityNotFound = Fault{Type: "EntityNotFoundException", Message: "Table not found."}
	InternalError  = Fault{Type: "InternalServiceException", Message: "Internal service error", Status: http.StatusInternalServerError}
)

// Inject makes the next f.Times requests of operation op (e.g.
// "UpdateTable") answer f. Faults queue: a second Inject for op follows
// the first.
func (p *Proxy) Inject(op string, f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[op] = append(p.faults[op], f)
}

// takeFault pops the fault for op, if any (p.mu held).
func (p *Proxy) takeFault(op string) (Fault, bool) {
	q := p.faults[op]
	if len(q) == 0 {
		return Fault{}, false
	}
	f := q[0]
	if q[0].Times--; q[0].Times == 0 {
		p.faults[op] = q[1:]
	}
	return f, true
}

// Hold is one request held by the proxy before it is checked or
// forwarded: Arrived is closed when it comes in, and it goes on (checked
// against moto's state at that time) when Release is called or its
// client gives up.
type Hold struct {
	arrived, release chan struct{}
	once             sync.Once
}

// Hold makes the next request of operation op wait for Release. Holds
// queue: each takes one request.
func (p *Proxy) Hold(op string) *Hold {
	h := &Hold{arrived: make(chan struct{}), release: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds[op] = append(p.holds[op], h)
	return h
}

// Arrived is closed once the held request has come in.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Release lets the held request go on (again: no effect).
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

func (p *Proxy) takeHold(op string) *Hold {
	q := p.holds[op]
	if len(q) == 0 {
		return nil
	}
	p.holds[op] = q[1:]
	return q[0]
}

func (h *Hold) wait(r *http.Request) {
	close(h.arrived)
	select {
	case <-h.release:
	case <-r.Context().Done():
	}
}
