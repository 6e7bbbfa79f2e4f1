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
// check, what decoding allocates is proportional to len(b). It returns the
// number of bytes the struct takes.
func checkThrift(b []byte) (int, error) {
	w := thriftWalker{b: b}
	if err := w.structure(0); err != nil {
		return 0, err
	}
	return w.pos, nil
}

// maxThriftDepth bounds struct nesting; Parquet metadata nests a few levels.
const maxThriftDepth = 32

var errThriftShort = errors.New("thrift data ends early")

type thriftWalker struct {
	b   []byte
	pos int
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
	if depth > maxThriftDepth {
		return errors.New("thrift structs nested too deep")
	}
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil // stop field
		}
		if h>>4 == 0 { // long form: the field id follows
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(h&0x0f, depth, false); err != nil {
			return err
		}
	}
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
		return w.skip(n)
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
