package uctest

import (
	"fmt"
	"net/http"
	"unicode/utf16"
)

// The real server has no length checks of its own for what an update or a
// create stores: its database's column widths refuse the row, and the
// server answers 500 InternalServerErrorException "Value too long for
// column" (UC 0.6.0, H2). The widths are the JPA mappings': IdentifiableDAO
// name (a top-level column's name) and PropertyDAO key and value take the
// default VARCHAR(255); TableInfoDAO and ColumnInfoDAO comment are
// length = 65535. A nested struct field's name or comment lives inside the
// column's type_json (16,777,215) and is not bounded. H2 counts characters
// (UTF-16 code units), not bytes.
const (
	widthName     = 255
	widthProperty = 255
	widthComment  = 65535
)

// checkWidths answers as the real server does when t holds a value wider
// than its database column.
func checkWidths(t *Table) *apiError {
	tooLong := func(column string, width int, v string) *apiError {
		return errf(http.StatusInternalServerError, "InternalServerErrorException", "INTERNAL",
			"Failed to update table %s: could not execute statement [Value too long for column %q: %q]",
			t.FullName(), fmt.Sprintf("%s CHARACTER VARYING(%d)", column, width), fmt.Sprintf("'%.80s... (%d)", v, chars(v)))
	}
	if t.Comment != nil && chars(*t.Comment) > widthComment {
		return tooLong("COMMENT", widthComment, *t.Comment)
	}
	for _, f := range t.Columns.Fields {
		if chars(f.Name) > widthName {
			return tooLong("NAME", widthName, f.Name)
		}
		if c, ok := f.Metadata["comment"].(string); ok && chars(c) > widthComment {
			return tooLong("COMMENT", widthComment, c)
		}
	}
	for k, v := range t.Properties {
		if chars(k) > widthProperty {
			return tooLong("PROPERTY_KEY", widthProperty, k)
		}
		if chars(v) > widthProperty {
			return tooLong("PROPERTY_VALUE", widthProperty, v)
		}
	}
	return nil
}

// chars is the length of s as a Java string (UTF-16 code units).
func chars(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
