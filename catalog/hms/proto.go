package hms

import (
	"context"
	"strconv"
	"strings"

	"github.com/apache/thrift/lib/go/thrift"
)

// skipRecorder wraps the reading protocol and records every field the
// generated code skipped: a field id its IDL does not know (gohive's IDL
// predates HMS 4.0 GA, which added Table fields 26-28) or a type it did not
// expect. A skipped field is data the decoded struct lost, so a record read
// with one cannot be written back whole. Each is recorded as the path of
// field ids from the reply's result struct, e.g. "0.1.26" (success →
// GetTableResult.table → Table field 26).
//
// An empty map, list or set is read and not recorded: nothing is lost.
// Nested skips run inside the wrapped protocol's Skip on the wrapped
// protocol itself, so the path stack sees only what the generated code reads.
//
// It also records which fields every struct instance of the reply held
// (present: struct path → a bit per field id, see Presence), so that a
// write back can leave out what the server left unset (fieldFilter).
type skipRecorder struct {
	thrift.TProtocol
	path    []int16 // field id being read at each open struct
	skipped []string
	pres    segs              // the path of what is being read, lists by index
	present map[string]uint64 // struct path → field ids present
}

func (p *skipRecorder) reset() {
	p.path = p.path[:0]
	p.skipped = nil
	p.pres = p.pres[:0]
	p.present = nil
}

func (p *skipRecorder) ReadStructBegin(ctx context.Context) (string, error) {
	p.path = append(p.path, 0)
	if p.pres.push('s') {
		p.pres[len(p.pres)-1].kind = 'x' // inside a map: not recorded
	}
	return p.TProtocol.ReadStructBegin(ctx)
}

func (p *skipRecorder) ReadStructEnd(ctx context.Context) error {
	if len(p.path) > 0 {
		p.path = p.path[:len(p.path)-1]
	}
	if s := p.pres.pop(); s.kind == 's' {
		if p.present == nil {
			p.present = map[string]uint64{}
		}
		p.present[s.path] = s.seen
	}
	return p.TProtocol.ReadStructEnd(ctx)
}

func (p *skipRecorder) ReadFieldBegin(ctx context.Context) (string, thrift.TType, int16, error) {
	name, typ, id, err := p.TProtocol.ReadFieldBegin(ctx)
	if len(p.path) > 0 {
		p.path[len(p.path)-1] = id
	}
	if n := len(p.pres); n > 0 && typ != thrift.STOP {
		top := &p.pres[n-1]
		top.id = id
		if id >= 0 && id < 64 {
			top.seen |= 1 << id
		}
	}
	return name, typ, id, err
}

func (p *skipRecorder) ReadListBegin(ctx context.Context) (thrift.TType, int, error) {
	p.pres.push('l')
	return p.TProtocol.ReadListBegin(ctx)
}

func (p *skipRecorder) ReadListEnd(ctx context.Context) error {
	p.pres.pop()
	return p.TProtocol.ReadListEnd(ctx)
}

func (p *skipRecorder) ReadSetBegin(ctx context.Context) (thrift.TType, int, error) {
	p.pres.push('l')
	return p.TProtocol.ReadSetBegin(ctx)
}

func (p *skipRecorder) ReadSetEnd(ctx context.Context) error {
	p.pres.pop()
	return p.TProtocol.ReadSetEnd(ctx)
}

func (p *skipRecorder) ReadMapBegin(ctx context.Context) (thrift.TType, thrift.TType, int, error) {
	p.pres.push('m')
	return p.TProtocol.ReadMapBegin(ctx)
}

func (p *skipRecorder) ReadMapEnd(ctx context.Context) error {
	p.pres.pop()
	return p.TProtocol.ReadMapEnd(ctx)
}

func (p *skipRecorder) Skip(ctx context.Context, fieldType thrift.TType) error {
	// An empty container loses nothing: HMS sends
	// SkewedInfo.skewedColValueLocationMaps (a map keyed by lists, which Go
	// cannot represent, so gohive's IDL leaves it out) as an empty map on
	// every table that is not skewed.
	switch fieldType {
	case thrift.MAP:
		kt, vt, n, err := p.ReadMapBegin(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			p.record()
		}
		for range n {
			if err := p.TProtocol.Skip(ctx, kt); err != nil {
				return err
			}
			if err := p.TProtocol.Skip(ctx, vt); err != nil {
				return err
			}
		}
		return p.ReadMapEnd(ctx)
	case thrift.LIST, thrift.SET:
		read, end := p.ReadListBegin, p.ReadListEnd
		if fieldType == thrift.SET {
			read, end = p.ReadSetBegin, p.ReadSetEnd
		}
		et, n, err := read(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			p.record()
		}
		for range n {
			if err := p.TProtocol.Skip(ctx, et); err != nil {
				return err
			}
		}
		return end(ctx)
	}
	p.record()
	return p.TProtocol.Skip(ctx, fieldType)
}

func (p *skipRecorder) record() {
	parts := make([]string, len(p.path))
	for i, id := range p.path {
		parts[i] = strconv.Itoa(int(id))
	}
	p.skipped = append(p.skipped, strings.Join(parts, "."))
}

// skippedUnder returns the recorded paths that start with prefix (a dotted
// field-id path), with the prefix removed: the fields lost inside that struct.
func skippedUnder(skipped []string, prefix string) []string {
	var out []string
	for _, s := range skipped {
		if rest, ok := strings.CutPrefix(s, prefix+"."); ok {
			out = append(out, rest)
		}
	}
	return out
}
