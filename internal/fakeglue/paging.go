package fakeglue

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// MaxPageSize is Glue's largest MaxResults for GetTables and GetDatabases:
// both take CatalogGetterPageSize, "min": 1, "max": 100 (botocore's Glue
// service model, service-2.json, shape CatalogGetterPageSize).
const MaxPageSize = 100

// DefaultPageSize is the page the proxy answers without MaxResults. Glue
// does not document its default; the largest page keeps a client that
// sends none correct while still making it page.
const DefaultPageSize = MaxPageSize

// paged serves GetTables / GetDatabases in pages. moto ignores MaxResults
// and NextToken and answers everything at once; the proxy asks moto for
// everything, orders it by name and answers one page of at most
// MaxResults with an opaque NextToken when more follow (Glue's API
// reference: "NextToken: A continuation token, present if the current
// list segment is not the last"). The pages after the first are cut from
// the answer the first page was (a listing of 10,000 tables is one moto
// listing, not one per page: moto re-serializes every table on each);
// the token names that answer and the last name served, and a token whose
// answer is gone (listings) is served from a fresh one, after that name:
// by name, not by offset, so a table that stays is neither repeated nor
// skipped. MaxResults outside 1..100 is a 400 ValidationException, as the
// model's range makes it.
func (p *Proxy) paged(w http.ResponseWriter, r *http.Request, body []byte, listKey string) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "SerializationException", "fakeglue: body: "+err.Error())
		return
	}
	size := DefaultPageSize
	if raw, ok := in["MaxResults"]; ok {
		if err := json.Unmarshal(raw, &size); err != nil || size < 1 || size > MaxPageSize {
			writeError(w, http.StatusBadRequest, "ValidationException", fmt.Sprintf(
				"1 validation error detected: Value '%s' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and %d", raw, MaxPageSize))
			return
		}
	}
	var (
		after string
		id    uint64
	)
	if raw, ok := in["NextToken"]; ok {
		var tok string
		b, err := base64.RawURLEncoding.DecodeString(unquote(raw, &tok))
		idText, name, found := strings.Cut(string(b), ":")
		if id, _ = strconv.ParseUint(idText, 10, 64); err != nil || !found || name == "" {
			writeError(w, http.StatusBadRequest, "InvalidInputException", "Invalid NextToken")
			return
		}
		after = name
	}
	l := p.listing(id)
	if l == nil {
		delete(in, "MaxResults")
		delete(in, "NextToken")
		fwd, _ := json.Marshal(in)
		status, hdr, out, err := p.roundTrip(r, fwd)
		if err != nil || status != http.StatusOK {
			if err != nil {
				writeError(w, http.StatusBadGateway, "InternalServiceException", "fakeglue: upstream: "+err.Error())
				return
			}
			w.Header().Set("Content-Type", hdr.Get("Content-Type"))
			w.Header().Set("X-Amzn-ErrorType", hdr.Get("X-Amzn-ErrorType"))
			w.WriteHeader(status)
			_, _ = w.Write(out)
			return
		}
		if l, err = parseListing(out, listKey); err != nil {
			writeError(w, http.StatusBadGateway, "InternalServiceException", "fakeglue: upstream answer: "+err.Error())
			return
		}
	}
	page, more := l.page(after, size)
	if more == "" {
		p.dropListing(id)
	} else {
		if id == 0 {
			id = p.keepListing(l)
		}
		page["NextToken"], _ = json.Marshal(base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatUint(id, 10) + ":" + more)))
	}
	b, _ := json.Marshal(page)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_, _ = w.Write(b)
}

func unquote(raw json.RawMessage, s *string) string {
	if json.Unmarshal(raw, s) != nil {
		return ""
	}
	return *s
}

// listing is one answer of moto's, ordered by name, which a listing's
// pages are cut from.
type listing struct {
	key  string
	resp map[string]json.RawMessage
	all  []named
}

type named struct {
	name string
	raw  json.RawMessage
}

// maxListings bounds the answers the proxy keeps for listings not read to
// their end.
const maxListings = 16

func parseListing(out []byte, listKey string) (*listing, error) {
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if raw, ok := resp[listKey]; ok {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("%s: %w", listKey, err)
		}
	}
	all := make([]named, 0, len(items))
	for _, it := range items {
		var n struct{ Name string }
		if err := json.Unmarshal(it, &n); err != nil {
			return nil, fmt.Errorf("%s: %w", listKey, err)
		}
		all = append(all, named{n.Name, it})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	delete(resp, listKey)
	delete(resp, "NextToken")
	return &listing{key: listKey, resp: resp, all: all}, nil
}

// page is the answer of the size entries after the name after (""; from
// the first), and the last name it holds when more follow ("" if not).
func (l *listing) page(after string, size int) (map[string]json.RawMessage, string) {
	start := 0
	if after != "" {
		start = sort.Search(len(l.all), func(i int) bool { return l.all[i].name > after })
	}
	end := min(start+size, len(l.all))
	list := make([]json.RawMessage, 0, end-start)
	for _, n := range l.all[start:end] {
		list = append(list, n.raw)
	}
	resp := make(map[string]json.RawMessage, len(l.resp)+2)
	maps.Copy(resp, l.resp)
	resp[l.key], _ = json.Marshal(list)
	if end < len(l.all) {
		return resp, l.all[end-1].name
	}
	return resp, ""
}

// listing is the kept answer id names (nil: none, or no longer kept).
func (p *Proxy) listing(id uint64) *listing {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.listings[id]
}

// keepListing keeps l for its next pages and returns its id, forgetting
// the oldest kept answer beyond maxListings.
func (p *Proxy) keepListing(l *listing) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastListing++
	id := p.lastListing
	p.listings[id] = l
	p.listingOrder = append(p.listingOrder, id)
	for len(p.listingOrder) > maxListings {
		delete(p.listings, p.listingOrder[0])
		p.listingOrder = p.listingOrder[1:]
	}
	return id
}

// dropListing forgets a listing read to its end.
func (p *Proxy) dropListing(id uint64) {
	if id == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.listings, id)
	p.listingOrder = slices.DeleteFunc(p.listingOrder, func(x uint64) bool { return x == id })
}
