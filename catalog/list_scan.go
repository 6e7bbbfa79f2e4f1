package catalog

import "bytes"

// dropColumns returns a listTables page with the value of every table's
// "columns" key replaced by []: the columns are most of a page's bytes and
// a listing does not use them, and encoding/json scans every byte twice
// (validation, then decoding) at a fraction of the speed of this one pass.
// Only a key "columns" of an element of the top-level "tables" array
// (nesting depth 3) holding an array is touched. Input that is not
// well-formed JSON is returned unchanged, for json.Unmarshal to report.
func dropColumns(b []byte) []byte {
	var out []byte
	last, depth := 0, 0
	for i := 0; i < len(b); {
		switch b[i] {
		case '"':
			end := stringEnd(b, i)
			if end < 0 {
				return b
			}
			if depth == 3 && end-i == len(`"columns"`) && string(b[i+1:end-1]) == "columns" {
				k := skipSpace(b, end)
				if k < len(b) && b[k] == ':' {
					v := skipSpace(b, k+1)
					if v < len(b) && b[v] == '[' {
						closing := arrayEnd(b, v)
						if closing < 0 {
							return b
						}
						out = append(out, b[last:v]...)
						out = append(out, "[]"...)
						last, i = closing, closing
						continue
					}
				}
			}
			i = end
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		default:
			i++
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// stringEnd returns the index just after the string starting at b[i] == '"',
// or -1 if it is not terminated.
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1
		}
		q += j
		bs := 0
		for k := q - 1; k > i && b[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// arrayEnd returns the index just after the array starting at b[i] == '[',
// or -1 if it is not closed.
func arrayEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); {
		switch b[j] {
		case '"':
			end := stringEnd(b, j)
			if end < 0 {
				return -1
			}
			j = end
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
		j++
	}
	return -1
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
