package hms

import (
	"context"
	"strconv"
	"strings"

	"github.com/apache/thrift/lib/go/thrift"
)

// Presence is which fields a read of one Table held: for each struct
// instance inside the Table (keyed by its path of field ids, list elements
// by index: "" the Table, "7" its sd, "7.7" the serde, "7.1[0]" the first
// column), a bit per field id (0-63) the server sent. Structs inside maps
// have no stable position and are not recorded.
type Presence map[string]uint64

// absent reports whether the field at path (inside the Table) was not in
// the read although its struct instance was: a field of default
// requiredness the server left unset (null on its side). A struct instance
// the read did not have, or an id above 63, is never absent.
func (p Presence) absent(path string) bool {
	parent, idText := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, idText = path[:i], path[i+1:]
	}
	id, err := strconv.Atoi(idText)
	if err != nil || id < 0 || id > 63 {
		return false
	}
	bits, ok := p[parent]
	return ok && bits&(1<<id) == 0
}

// presenceUnder is the Presence of the Table at prefix in a reply's
// recorded struct paths ("0.1": get_table_req's table).
func presenceUnder(all map[string]uint64, prefix string) Presence {
	p := Presence{}
	for k, bits := range all {
		rest, ok := strings.CutPrefix(k, prefix)
		switch {
		case !ok:
		case rest == "":
			p[""] = bits
		case rest[0] == '.':
			p[rest[1:]] = bits
		}
	}
	if len(p) == 0 {
		return nil
	}
	return p
}

// presenceOfElements is the Presence of each Table of a list at prefix
// ("0.1": get_table_objects_by_name_req's tables), by index, in one pass.
func presenceOfElements(all map[string]uint64, prefix string) map[int]Presence {
	out := map[int]Presence{}
	for k, bits := range all {
		rest, ok := strings.CutPrefix(k, prefix+"[")
		if !ok {
			continue
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			continue
		}
		i, err := strconv.Atoi(rest[:end])
		if err != nil {
			continue
		}
		rel := rest[end+1:]
		if rel != "" {
			if rel[0] != '.' {
				continue
			}
			rel = rel[1:]
		}
		if out[i] == nil {
			out[i] = Presence{}
		}
		out[i][rel] = bits
	}
	return out
}

// seg is one level of a path being read or written: a struct (path and
// the field id being read or written, and on reads the ids seen), a list
// or set (its path and the current element's index), or a map.
type seg struct {
	kind byte // 's' struct, 'l' list or set, 'm' map
	path string
	id   int16
	idx  int
	seen uint64
}

// segs is a path stack shared by the reading and the writing side.
type segs []seg

// valuePath is the path of the value about to be read or written at the
// top of the stack, and false inside a map.
func (s *segs) valuePath(element bool) (string, bool) {
	if len(*s) == 0 {
		return "", true
	}
	top := &(*s)[len(*s)-1]
	switch top.kind {
	case 's':
		return joinPath(top.path, strconv.Itoa(int(top.id))), true
	case 'l':
		if element {
			top.idx++
		}
		return top.path + "[" + strconv.Itoa(top.idx) + "]", true
	}
	return "", false
}

// push opens a struct or container at the current value path; inMap
// reports whether it lies inside a map (no stable position).
func (s *segs) push(kind byte) (inMap bool) {
	path, ok := s.valuePath(true)
	for _, x := range *s {
		if x.kind == 'm' {
			ok = false
		}
	}
	*s = append(*s, seg{kind: kind, path: path, idx: -1})
	return !ok
}

func (s *segs) pop() seg {
	if len(*s) == 0 {
		return seg{}
	}
	top := (*s)[len(*s)-1]
	*s = (*s)[:len(*s)-1]
	return top
}

func joinPath(path, part string) string {
	if path == "" {
		return part
	}
	return path + "." + part
}

// fieldFilter is the writing protocol of a call. For an alter it leaves
// out every field of the Table written that the read did not have
// (Presence.absent) and whose value is still the zero value ("" , 0,
// false, an empty container or struct): gohive's Thrift-0.14 structs
// cannot tell unset from empty for fields of default requiredness and
// send them all, so a write back would otherwise store
// sd.serdeInfo.name = "" (and on HMS 3.1.3 viewOriginalText and
// viewExpandedText = "") where the record had none. A field the read had,
// or one now set to a value, is written as it is. Such a candidate field
// is buffered (the calls recorded) until its end, then written or dropped.
type fieldFilter struct {
	thrift.TProtocol
	root string            // the Table's path in the call's arguments ("3")
	omit func(string) bool // nil: write everything
	path segs              // where the generated code is writing
	held *heldField        // the candidate field being buffered
	ops  []func() error    // its calls
}

// heldField is a buffered candidate field: its header, how deep the
// generated code is inside it, and whether any value in it is non-zero.
type heldField struct {
	name    string
	typ     thrift.TType
	id      int16
	depth   int
	nonzero bool
}

// set configures the filter for one call (omit nil: none).
func (f *fieldFilter) set(root string, omit func(string) bool) {
	f.root, f.omit, f.path, f.held, f.ops = root, omit, f.path[:0], nil, nil
}

// record buffers a call of a held field, noting whether its value is zero.
func (f *fieldFilter) record(nonzero bool, op func() error) error {
	f.held.nonzero = f.held.nonzero || nonzero
	f.ops = append(f.ops, op)
	return nil
}

func (f *fieldFilter) WriteMessageBegin(ctx context.Context, name string, typ thrift.TMessageType, seq int32) error {
	f.path = f.path[:0]
	return f.TProtocol.WriteMessageBegin(ctx, name, typ, seq)
}

func (f *fieldFilter) WriteStructBegin(ctx context.Context, name string) error {
	if f.held != nil {
		f.held.depth++
		return f.record(false, func() error { return f.TProtocol.WriteStructBegin(ctx, name) })
	}
	f.path.push('s')
	return f.TProtocol.WriteStructBegin(ctx, name)
}

func (f *fieldFilter) WriteStructEnd(ctx context.Context) error {
	if f.held != nil {
		f.held.depth--
		return f.record(false, func() error { return f.TProtocol.WriteStructEnd(ctx) })
	}
	f.path.pop()
	return f.TProtocol.WriteStructEnd(ctx)
}

func (f *fieldFilter) WriteFieldBegin(ctx context.Context, name string, typ thrift.TType, id int16) error {
	if f.held != nil {
		return f.record(true, func() error { return f.TProtocol.WriteFieldBegin(ctx, name, typ, id) })
	}
	if n := len(f.path); n > 0 && f.path[n-1].kind == 's' {
		f.path[n-1].id = id
	}
	if f.omit != nil {
		if p, ok := f.path.valuePath(false); ok {
			// A byte field is never held: WriteByte is not wrapped (its
			// Thrift signature is not io.ByteWriter's, which vet insists
			// on), and the only one, Table.accessType, is optional.
			if rel, in := strings.CutPrefix(p, f.root+"."); in && typ != thrift.BYTE && f.omit(rel) {
				f.held, f.ops = &heldField{name: name, typ: typ, id: id}, f.ops[:0]
				return nil
			}
		}
	}
	return f.TProtocol.WriteFieldBegin(ctx, name, typ, id)
}

func (f *fieldFilter) WriteFieldEnd(ctx context.Context) error {
	if f.held == nil {
		return f.TProtocol.WriteFieldEnd(ctx)
	}
	if f.held.depth > 0 {
		return f.record(false, func() error { return f.TProtocol.WriteFieldEnd(ctx) })
	}
	h, ops := f.held, f.ops
	f.held, f.ops = nil, nil
	if !h.nonzero {
		return nil // unset in the read, still the zero value: left out
	}
	if err := f.TProtocol.WriteFieldBegin(ctx, h.name, h.typ, h.id); err != nil {
		return err
	}
	for _, op := range ops {
		if err := op(); err != nil {
			return err
		}
	}
	return f.TProtocol.WriteFieldEnd(ctx)
}

func (f *fieldFilter) WriteFieldStop(ctx context.Context) error {
	if f.held != nil {
		return f.record(false, func() error { return f.TProtocol.WriteFieldStop(ctx) })
	}
	return f.TProtocol.WriteFieldStop(ctx)
}

func (f *fieldFilter) WriteMapBegin(ctx context.Context, kt, vt thrift.TType, size int) error {
	if f.held != nil {
		f.held.depth++
		return f.record(size > 0, func() error { return f.TProtocol.WriteMapBegin(ctx, kt, vt, size) })
	}
	f.path.push('m')
	return f.TProtocol.WriteMapBegin(ctx, kt, vt, size)
}

func (f *fieldFilter) WriteMapEnd(ctx context.Context) error {
	if f.held != nil {
		f.held.depth--
		return f.record(false, func() error { return f.TProtocol.WriteMapEnd(ctx) })
	}
	f.path.pop()
	return f.TProtocol.WriteMapEnd(ctx)
}

func (f *fieldFilter) WriteListBegin(ctx context.Context, et thrift.TType, size int) error {
	if f.held != nil {
		f.held.depth++
		return f.record(size > 0, func() error { return f.TProtocol.WriteListBegin(ctx, et, size) })
	}
	f.path.push('l')
	return f.TProtocol.WriteListBegin(ctx, et, size)
}

func (f *fieldFilter) WriteListEnd(ctx context.Context) error {
	if f.held != nil {
		f.held.depth--
		return f.record(false, func() error { return f.TProtocol.WriteListEnd(ctx) })
	}
	f.path.pop()
	return f.TProtocol.WriteListEnd(ctx)
}

func (f *fieldFilter) WriteSetBegin(ctx context.Context, et thrift.TType, size int) error {
	if f.held != nil {
		f.held.depth++
		return f.record(size > 0, func() error { return f.TProtocol.WriteSetBegin(ctx, et, size) })
	}
	f.path.push('l')
	return f.TProtocol.WriteSetBegin(ctx, et, size)
}

func (f *fieldFilter) WriteSetEnd(ctx context.Context) error {
	if f.held != nil {
		f.held.depth--
		return f.record(false, func() error { return f.TProtocol.WriteSetEnd(ctx) })
	}
	f.path.pop()
	return f.TProtocol.WriteSetEnd(ctx)
}

func (f *fieldFilter) WriteBool(ctx context.Context, v bool) error {
	if f.held != nil {
		return f.record(v, func() error { return f.TProtocol.WriteBool(ctx, v) })
	}
	return f.TProtocol.WriteBool(ctx, v)
}

func (f *fieldFilter) WriteI16(ctx context.Context, v int16) error {
	if f.held != nil {
		return f.record(v != 0, func() error { return f.TProtocol.WriteI16(ctx, v) })
	}
	return f.TProtocol.WriteI16(ctx, v)
}

func (f *fieldFilter) WriteI32(ctx context.Context, v int32) error {
	if f.held != nil {
		return f.record(v != 0, func() error { return f.TProtocol.WriteI32(ctx, v) })
	}
	return f.TProtocol.WriteI32(ctx, v)
}

func (f *fieldFilter) WriteI64(ctx context.Context, v int64) error {
	if f.held != nil {
		return f.record(v != 0, func() error { return f.TProtocol.WriteI64(ctx, v) })
	}
	return f.TProtocol.WriteI64(ctx, v)
}

func (f *fieldFilter) WriteDouble(ctx context.Context, v float64) error {
	if f.held != nil {
		return f.record(v != 0, func() error { return f.TProtocol.WriteDouble(ctx, v) })
	}
	return f.TProtocol.WriteDouble(ctx, v)
}

func (f *fieldFilter) WriteString(ctx context.Context, v string) error {
	if f.held != nil {
		return f.record(v != "", func() error { return f.TProtocol.WriteString(ctx, v) })
	}
	return f.TProtocol.WriteString(ctx, v)
}

func (f *fieldFilter) WriteBinary(ctx context.Context, v []byte) error {
	if f.held != nil {
		return f.record(len(v) > 0, func() error { return f.TProtocol.WriteBinary(ctx, v) })
	}
	return f.TProtocol.WriteBinary(ctx, v)
}

func (f *fieldFilter) WriteUUID(ctx context.Context, v thrift.Tuuid) error {
	if f.held != nil {
		return f.record(v != thrift.Tuuid{}, func() error { return f.TProtocol.WriteUUID(ctx, v) })
	}
	return f.TProtocol.WriteUUID(ctx, v)
}
