package uc

import (
	"bytes"
	"fmt"
	"io"
)

// pageScan is one pass over a list page's structure (strings, nesting,
// commas) as its bytes arrive, so that reading a page and preparing it for
// decoding is one scan:
//
//   - it counts the entries of the top-level arrays and refuses the first
//     entry over max, before the rest of the body is read;
//   - it finds the "columns" arrays of listTables entries, which
//     dropColumns replaces by [] before decoding: the columns are most of a
//     page's bytes and a listing does not use them, and encoding/json scans
//     every byte twice (validation, then decoding) at a fraction of the
//     speed of this pass.
//
// Only a key "columns" at nesting depth 3 (an element of a top-level array)
// holding an array is dropped. The JSON is validated when decoded, except
// inside a dropped columns array: its brackets must match (an array that
// a '}' closes is not dropped, so json refuses it), but what it holds is
// not read, by this pass or by anyone.
type pageScan struct {
	max      int // entries allowed in one top-level array (0: no limit)
	pos      int // next byte of the body to scan
	depth    int
	arrayAt2 bool // the open container at depth 2 is an array
	commas   int  // commas of that array so far (its entries - 1)
	inString bool
	escaped  bool // the byte at pos is escaped by a backslash before it
	strStart int  // offset of the opening quote of the current string
	colKey   int  // after a depth-3 "columns": 1, and 2 once its ':' passed
	colStart int  // offset of the '[' of the columns array being passed, or -1
	colDepth int  // depth inside that array
	spans    [][2]int
}

func newPageScan(maxEntries int) *pageScan { return &pageScan{max: maxEntries, colStart: -1} }

// scan advances over b[s.pos:]; b is the body read so far (offsets are
// into it, so it may grow between calls).
func (s *pageScan) scan(b []byte) error {
	i := s.pos
	defer func() { s.pos = len(b) }()
	for ; i < len(b); i++ {
		if s.inString {
			if s.escaped {
				s.escaped = false
				continue
			}
			q := bytes.IndexByte(b[i:], '"')
			if q < 0 {
				s.escaped = backslashesBefore(b, len(b), i)%2 == 1
				return nil
			}
			q += i
			// The backslashes before the quote start at or after i: b[i-1]
			// is the opening quote or an escaped byte already passed.
			if backslashesBefore(b, q, i)%2 == 1 {
				i = q
				continue
			}
			s.inString = false
			i = q
			if s.depth == 3 && q-s.strStart == len(`"columns`) && string(b[s.strStart+1:q]) == "columns" {
				s.colKey = 1
			}
			continue
		}
		switch c := b[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			s.inString, s.strStart, s.colKey = true, i, 0
		case ':':
			if s.colKey == 1 {
				s.colKey = 2
			} else {
				s.colKey = 0
			}
		case '{', '[':
			if c == '[' && s.colKey == 2 && s.colStart < 0 {
				s.colStart, s.colDepth = i, s.depth+1
			}
			s.colKey = 0
			s.depth++
			if s.depth == 2 {
				s.arrayAt2, s.commas = c == '[', 0
			}
		case '}', ']':
			s.colKey = 0
			if s.colStart >= 0 && s.depth == s.colDepth {
				if c == ']' {
					s.spans = append(s.spans, [2]int{s.colStart, i + 1})
				}
				s.colStart = -1
			}
			s.depth--
		case ',':
			s.colKey = 0
			if s.depth == 2 && s.arrayAt2 && s.max > 0 {
				if s.commas++; s.commas >= s.max {
					return &boundError{fmt.Sprintf("page holds more than %d entries, the max_results asked for", s.max)}
				}
			}
		default:
			s.colKey = 0
		}
	}
	return nil
}

// backslashesBefore counts the backslashes right before b[end], back to
// b[from] at most.
func backslashesBefore(b []byte, end, from int) int {
	n := 0
	for k := end - 1; k >= from && b[k] == '\\'; k-- {
		n++
	}
	return n
}

// dropSpans returns b with every scanned columns array replaced by [].
func (s *pageScan) dropSpans(b []byte) []byte {
	if len(s.spans) == 0 {
		return b
	}
	n := len(b)
	for _, sp := range s.spans {
		n -= sp[1] - sp[0] - len("[]")
	}
	out := make([]byte, 0, n)
	last := 0
	for _, sp := range s.spans {
		out = append(out, b[last:sp[0]]...)
		out = append(out, "[]"...)
		last = sp[1]
	}
	return append(out, b[last:]...)
}

// dropColumns returns a listTables page with the value of every table's
// "columns" key replaced by [] (see pageScan). Input that is not
// well-formed JSON may come back unchanged or in part, for json.Unmarshal
// to report.
func dropColumns(b []byte) []byte {
	s := newPageScan(0)
	_ = s.scan(b)
	return s.dropSpans(b)
}

// readPage reads a list page body of at most lim.bytes through a pageScan
// (into a buffer of the announced length when there is one: a list page is
// hundreds of KB, and io.ReadAll would grow its buffer several times on the
// way). With lim.dropColumns it returns the body with the columns dropped.
func readPage(src io.Reader, contentLength int64, lim *pageLimit) ([]byte, error) {
	tooBig := func() error {
		return &boundError{fmt.Sprintf("page body exceeds %d bytes (MaxListPageBytes)", lim.bytes)}
	}
	if contentLength > lim.bytes {
		return nil, tooBig() // refused unread
	}
	size := min(64<<10, lim.bytes+1)
	if contentLength > 0 {
		size = contentLength + 1 // +1: EOF without growing
	}
	buf := make([]byte, 0, size)
	s := newPageScan(lim.entries)
	for {
		if len(buf) == cap(buf) { // grow, to one byte over the cap at most
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), lim.bytes+1))
			buf = grown[:copy(grown, buf)]
		}
		// One byte over the cap is enough to know.
		n, err := src.Read(buf[len(buf):min(int64(cap(buf)), lim.bytes+1)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > lim.bytes {
			return nil, tooBig()
		}
		if serr := s.scan(buf); serr != nil {
			return nil, serr
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if contentLength > 0 && int64(len(buf)) != contentLength {
		return nil, io.ErrUnexpectedEOF
	}
	if lim.dropColumns {
		return s.dropSpans(buf), nil
	}
	return buf, nil
}
