package uc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
)

// Defaults of the listing bounds (Options.MaxListEntries, MaxListPageBytes).
const (
	defaultMaxListEntries   = 100_000
	defaultMaxListPageBytes = 32 << 20
	// maxPageToken bounds one page token: UC's is the last name of the
	// page (at most 255 characters), Databricks' an opaque string of a few
	// hundred; every token is kept to detect repeats and sent back in a URL.
	maxPageToken = 16 << 10
)

// pageLimit bounds one list page as it is read (readPage).
type pageLimit struct {
	entries int
	bytes   int64
	// dropColumns replaces the entries' columns by [] (listTables).
	dropColumns bool
}

// listBounds is what one listing may cost.
type listBounds struct {
	entries   int   // entries in all pages
	pages     int   // pages, derived from entries
	pageBytes int64 // body bytes of one page
}

func (c *Client) listBounds() listBounds {
	b := listBounds{entries: c.opts.MaxListEntries, pageBytes: c.opts.MaxListPageBytes}
	if b.entries <= 0 {
		b.entries = defaultMaxListEntries
	}
	if b.pageBytes <= 0 {
		b.pageBytes = defaultMaxListPageBytes
	}
	// readPage reads one byte past the bound to see it broken.
	b.pageBytes = min(b.pageBytes, math.MaxInt32)
	// A listing of b.entries takes b.entries/pageSize+1 full pages, but a
	// page may hold fewer entries than asked for, none at all, and still
	// carry a token (Databricks documents it for listTables): the page
	// bound leaves one short page for every full one, so only a listing
	// whose tokens never end meets it.
	b.pages = 2*(b.entries/pageSize) + 2
	return b
}

// boundError is a listing bound broken inside one page; listAll names the
// listing and the page around it.
type boundError struct{ msg string }

func (e *boundError) Error() string { return e.msg }
func (e *boundError) Unwrap() error { return ErrListBound }

// notAnObject refuses a 2xx list body that is not a JSON object (null, an
// array, nothing), which would otherwise decode as an empty page.
func notAnObject(b []byte) error {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) > 0 && t[0] == '{' {
		return nil
	}
	return &boundError{"answer is not a JSON object: " + quoteToken(string(b[:min(len(b), 64)]))}
}

// envelopeIn200 turns a decoded list page that carries an error envelope
// (classic "error_code" or Delta "error"), as some servers and proxies send
// with status 200, into the *APIError it describes (Status 200): it is not
// an empty listing.
func envelopeIn200(op string, b []byte, errorCode *string, errorValue json.RawMessage) error {
	if errorCode == nil && (len(errorValue) == 0 || string(errorValue) == "null") {
		return nil
	}
	e := parseAPIError(http.StatusOK, b)
	e.Operation = op
	return e
}

// quoteToken quotes a page token for an error message, shortened.
func quoteToken(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q… (%d bytes)", s[:64], len(s))
	}
	return fmt.Sprintf("%q", s)
}
