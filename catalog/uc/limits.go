package uc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf16"

	"github.com/deltasync/deltasync/catalog"
)

// Limits are the widths Unity Catalog stores values in. UC has no length
// checks of its own: a wider value reaches its database, which refuses the
// row, and the server answers 500 "Value too long for column" to the same
// request every time. CheckLimits refuses such a request before it is sent.
//
// The widths are those of UC 0.6.0's JPA mappings
// (server/src/main/java/io/unitycatalog/server/persist/dao/):
//   - IdentifiableDAO.name, a top-level column's name: @Column without a
//     length, JPA's default VARCHAR(255);
//   - PropertyDAO.key and .value, every table property: VARCHAR(255) the
//     same way. The server stores more than set-properties there: the
//     delta.clustering domain as the JSON list under "clusteringColumns"
//     (DeltaPropertyMapper.deriveFromDomainMetadata) and each protocol
//     feature as "delta.feature.<name>" = "supported";
//   - TableInfoDAO.comment and ColumnInfoDAO.comment (a top-level column's
//     metadata "comment"): length = 65535.
//
// A nested struct field's name and comment are stored inside the column's
// type_json (length 16,777,215) and are not bounded here. Lengths are
// counted in characters as Java (and H2) count them: UTF-16 code units.
// Checked against the real server by the contract suite
// (catalog/contract, Refusals).
type Limits struct {
	Name     int // a top-level column name
	Property int // a property key, and a property value
	Comment  int // the table comment, a top-level column comment
}

// UCLimits are Unity Catalog 0.6.0's limits (see Limits).
var UCLimits = Limits{Name: 255, Property: 255, Comment: 65535}

// LimitError is a request Limits.CheckUpdate or CheckCreate refused: What
// names the value (e.g. `property key "a…"`), Length its length and Limit
// the server's. errors.Is(err, catalog.ErrRefused) holds.
type LimitError struct {
	Operation string
	// Action is the update action holding the value (updateTable only).
	Action string
	What   string
	Length int
	Limit  int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s is %d characters; Unity Catalog stores at most %d (it would answer 500 Value too long for column)", e.What, e.Length, e.Limit)
}

// Is makes errors.Is(e, catalog.ErrRefused) hold.
func (e *LimitError) Is(target error) bool { return target == catalog.ErrRefused }

// CheckUpdate returns a *LimitError for the first value in req that the
// server cannot store, or nil.
func (l Limits) CheckUpdate(req UpdateTableRequest) error {
	for _, u := range req.Updates {
		if u == nil {
			continue
		}
		var err error
		switch v := derefUpdate(u).(type) {
		case SetProperties:
			err = l.properties(v.Updates)
		case SetTableComment:
			err = l.comment("table comment", v.Comment)
		case SetColumns:
			err = l.columns(v.Columns)
		case SetProtocol:
			err = l.protocol(v.Protocol)
		case SetDomainMetadata:
			err = l.clustering(v.Clustering)
		}
		if err != nil {
			le := err.(*LimitError)
			le.Operation, le.Action = "updateTable", u.Action()
			return err
		}
	}
	return nil
}

// CheckCreate is CheckUpdate for a createTable request.
func (l Limits) CheckCreate(req CreateTableRequest) error {
	err := l.properties(req.Properties)
	if err == nil {
		err = l.comment("table comment", req.Comment)
	}
	if err == nil {
		err = l.columns(req.Columns)
	}
	if err == nil {
		err = l.protocol(req.Protocol)
	}
	if err == nil && req.DomainMetadata != nil {
		err = l.clustering(req.DomainMetadata.Clustering)
	}
	if err != nil {
		err.(*LimitError).Operation = "createTable"
		return err
	}
	return nil
}

func (l Limits) check(what, v string, limit int) *LimitError {
	if limit <= 0 {
		return nil
	}
	if n := javaLen(v); n > limit {
		return &LimitError{What: what, Length: n, Limit: limit}
	}
	return nil
}

func (l Limits) properties(m map[string]string) error {
	for k, v := range m {
		if e := l.check(fmt.Sprintf("property key %q", abbrev(k)), k, l.Property); e != nil {
			return e
		}
		if e := l.check(fmt.Sprintf("value of property %q", abbrev(k)), v, l.Property); e != nil {
			return e
		}
	}
	return nil
}

func (l Limits) comment(what, c string) error {
	if e := l.check(what, c, l.Comment); e != nil {
		return e
	}
	return nil
}

func (l Limits) columns(s catalog.StructType) error {
	for _, f := range s.Fields {
		if e := l.check(fmt.Sprintf("column name %q", abbrev(f.Name)), f.Name, l.Name); e != nil {
			return e
		}
		if c, ok := f.Metadata["comment"].(string); ok {
			if e := l.check(fmt.Sprintf("comment of column %q", abbrev(f.Name)), c, l.Comment); e != nil {
				return e
			}
		}
	}
	return nil
}

func (l Limits) protocol(p catalog.Protocol) error {
	for _, fs := range [][]string{p.ReaderFeatures, p.WriterFeatures} {
		for _, f := range fs {
			k := "delta.feature." + f
			if e := l.check(fmt.Sprintf("property key %q (protocol feature %q)", abbrev(k), abbrev(f)), k, l.Property); e != nil {
				return e
			}
		}
	}
	return nil
}

// clustering checks the property UC stores the delta.clustering domain in:
// the column paths as a compact JSON list of lists.
func (l Limits) clustering(c *[][]string) error {
	if c == nil || *c == nil {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(*c); err != nil {
		return nil
	}
	v := string(bytes.TrimSpace(b.Bytes()))
	if e := l.check("delta.clustering domain (stored as the clusteringColumns property "+abbrev(v)+")", v, l.Property); e != nil {
		return e
	}
	return nil
}

// Limits returns the widths the client checks before sending (Options.Limits).
func (c *Client) Limits() Limits { return c.limits() }

func (c *Client) limits() Limits {
	if c == nil || c.opts.Limits == nil {
		return UCLimits
	}
	return *c.opts.Limits
}

// javaLen is the length of s as a Java string: UTF-16 code units.
func javaLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// abbrev shortens a long value for an error message.
func abbrev(s string) string {
	const keep = 40
	r := []rune(s)
	if len(r) <= keep {
		return s
	}
	return string(r[:keep]) + "…"
}
