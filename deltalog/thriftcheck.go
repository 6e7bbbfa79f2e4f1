package deltalog

import (
	"errors"
	"fmt"
)

// checkThrift walks one Thrift compact-protocol struct at the start of b
// (a Parquet footer, page header, column or offset index) without decoding
// it, and fails when a binary, list, set or map claims more elements or
// bytes than the rest of b could hold. parquet-go allocates a list or a
// byte string from its claimed length before reading it, so a footer of a
// few bytes claiming 2^31 row groups would cost gigabytes; after this
// check no claim exceeds the bytes behind it. Decoding can still cost far
// more than len(b): an empty struct is one byte on the wire but a Go
// struct of up to ~600 bytes once decoded (format.ColumnChunk), created
// with its whole list before the first element is read. So checkThrift
// also returns alloc, what decoding b would allocate at most (decodedSize
// per element, plus every byte string), for the caller to charge to its
// budget, and the number of bytes the struct takes.
func checkThrift(b []byte) (n int, alloc int64, err error) {
	w := thriftWalker{b: b}
	if err := w.structure(0); err != nil {
		return 0, 0, err
	}
	return w.pos, w.alloc, nil
}

// decodedSize is an upper bound of what parquet-go allocates for one
// element of a Thrift list, set or map of compact type typ: the largest
// Parquet metadata struct (format.ColumnChunk, 560 bytes) for a struct, a
// slice header for a binary or a nested collection, the value itself for
// scalars.
func decodedSize(typ byte) int64 {
	switch typ {
	case 12:
		return 640
	case 8, 9, 10, 11:
		return 24
	case 1, 2, 3:
		return 1
	case 4:
		return 2
	case 5:
		return 4
	}
	return 8
}

// maxThriftDepth bounds struct nesting; Parquet metadata nests a few levels.
const maxThriftDepth = 32

var errThriftShort = errors.New("thrift data ends early")

type thriftWalker struct {
	b   []byte
	pos int
	// alloc adds up what decoding the walked bytes allocates at most.
	alloc int64
}

func (w *thriftWalker) left() int { return len(w.b) - w.pos }

func (w *thriftWalker) byte() (byte, error) {
	if w.pos >= len(w.b) {
		return 0, errThriftShort
	}
	c := w.b[w.pos]
	w.pos++
	return c, nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		c, err := w.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("thrift varint too long")
}

func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(w.left()) {
		return fmt.Errorf("thrift value claims %d bytes, %d left", n, w.left())
	}
	w.pos += int(n)
	return nil
}

// count reads a claimed element count and checks that the bytes left
// could hold that many elements (each takes at least one byte).
func (w *thriftWalker) count(n uint64) (int, error) {
	if n > uint64(w.left()) {
		return 0, fmt.Errorf("thrift collection claims %d elements, %d bytes left", n, w.left())
	}
	return int(n), nil
}

func (w *thriftWalker) structure(depth int) error {
	return w.fields(depth, nil)
}

// fields walks the fields of a struct. For each, field (when not nil)
// may consume its value and return true; otherwise it is skipped.
func (w *thriftWalker) fields(depth int, field func(id int, typ byte) (bool, error)) error {
	if depth > maxThriftDepth {
		return errors.New("thrift structs nested too deep")
	}
	id := 0
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil // stop field
		}
		if d := int(h >> 4); d != 0 {
			id += d
		} else { // long form: the field id follows (zigzag i16)
			v, err := w.uvarint()
			if err != nil {
				return err
			}
			id = int(int16(uint16(v>>1) ^ -uint16(v&1)))
		}
		if field != nil {
			done, err := field(id, h&0x0f)
			if err != nil {
				return err
			}
			if done {
				continue
			}
		}
		if err := w.value(h&0x0f, depth, false); err != nil {
			return err
		}
	}
}

// i32 reads a zigzag varint of an i32 field of type typ.
func (w *thriftWalker) i32(typ byte) (int32, error) {
	if typ != 5 {
		return 0, fmt.Errorf("thrift field of type %d where an i32 belongs", typ)
	}
	v, err := w.uvarint()
	if err != nil {
		return 0, err
	}
	if v > 0xffffffff {
		return 0, errors.New("thrift i32 out of range")
	}
	return int32(uint32(v>>1) ^ -uint32(v&1)), nil
}

// pageHeader holds the fields of a Parquet PageHeader that checkChunk
// uses.
type pageHeader struct {
	typ, uncompressed, compressed int32
	// Which of the page-type headers is present.
	dataV1, dict, dataV2         bool
	numValues, numNulls, numRows int32
	defLen, repLen               int32
	uncompressedV2               bool // data_page_header_v2.is_compressed = false
}

// parsePageHeader reads a PageHeader at the start of b, checking every
// claim as checkThrift does, and returns it with its encoded length. It
// reads only what checkChunk needs and allocates nothing.
func parsePageHeader(b []byte) (pageHeader, int, error) {
	var h pageHeader
	w := thriftWalker{b: b}
	var seen [4]bool
	err := w.fields(0, func(id int, typ byte) (bool, error) {
		var err error
		switch id {
		case 1, 2, 3:
			var v int32
			v, err = w.i32(typ)
			*[]*int32{&h.typ, &h.uncompressed, &h.compressed}[id-1] = v
			seen[id] = true
		case 5, 7, 8:
			if typ != 12 {
				return false, fmt.Errorf("page header field %d of type %d where a struct belongs", id, typ)
			}
			h.dataV1, h.dict, h.dataV2 = h.dataV1 || id == 5, h.dict || id == 7, h.dataV2 || id == 8
			err = w.fields(1, func(sub int, typ byte) (bool, error) {
				var err error
				switch {
				case sub == 1:
					h.numValues, err = w.i32(typ)
				case id == 8 && sub == 2:
					h.numNulls, err = w.i32(typ)
				case id == 8 && sub == 3:
					h.numRows, err = w.i32(typ)
				case id == 8 && sub == 5:
					h.defLen, err = w.i32(typ)
				case id == 8 && sub == 6:
					h.repLen, err = w.i32(typ)
				case id == 8 && sub == 7 && (typ == 1 || typ == 2):
					h.uncompressedV2 = typ == 2
				default:
					return false, nil
				}
				return true, err
			})
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return h, 0, err
	}
	if !seen[1] || !seen[2] || !seen[3] {
		return h, 0, errors.New("page header lacks its type or sizes")
	}
	return h, w.pos, nil
}

// value skips one value of compact type typ. inCollection: booleans take
// a byte (in a struct field they are folded into the field header).
func (w *thriftWalker) value(typ byte, depth int, inCollection bool) error {
	switch typ {
	case 1, 2: // boolean true / false
		if inCollection {
			_, err := w.byte()
			return err
		}
		return nil
	case 3: // i8
		_, err := w.byte()
		return err
	case 4, 5, 6: // i16, i32, i64 (zigzag varints)
		_, err := w.uvarint()
		return err
	case 7: // double
		return w.skip(8)
	case 8: // binary
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		if err := w.skip(n); err != nil {
			return err
		}
		w.alloc += int64(n)
		return nil
	case 9, 10: // list, set
		h, err := w.byte()
		if err != nil {
			return err
		}
		size := uint64(h >> 4)
		if size == 15 {
			if size, err = w.uvarint(); err != nil {
				return err
			}
		}
		n, err := w.count(size)
		if err != nil {
			return err
		}
		w.alloc += int64(n) * decodedSize(h&0x0f)
		for range n {
			if err := w.value(h&0x0f, depth+1, true); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		size, err := w.uvarint()
		if err != nil || size == 0 {
			return err
		}
		n, err := w.count(size)
		if err != nil {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		w.alloc += int64(n) * (decodedSize(kv>>4) + decodedSize(kv&0x0f) + 16)
		for range n {
			if err := w.value(kv>>4, depth+1, true); err != nil {
				return err
			}
			if err := w.value(kv&0x0f, depth+1, true); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		return w.structure(depth + 1)
	}
	return fmt.Errorf("unknown thrift type %d", typ)
}
