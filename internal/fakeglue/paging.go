package fakeglue

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
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
// list segment is not the last"). Paging by name, not by offset, keeps a
// listing from repeating or skipping a table that stays while others are
// created or deleted between pages. MaxResults outside 1..100 is a 400
// ValidationException, as the model's range makes it.
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
	after := ""
	if raw, ok := in["NextToken"]; ok {
		var tok string
		b, err := base64.RawURLEncoding.DecodeString(unquote(raw, &tok))
		if err != nil || len(b) == 0 {
			writeError(w, http.StatusBadRequest, "InvalidInputException", "Invalid NextToken")
			return
		}
		after = string(b)
	}
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
	page, err := onePage(out, listKey, after, size)
	if err != nil {
		writeError(w, http.StatusBadGateway, "InternalServiceException", "fakeglue: upstream answer: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_, _ = w.Write(page)
}

func unquote(raw json.RawMessage, s *string) string {
	if json.Unmarshal(raw, s) != nil {
		return ""
	}
	return *s
}

// onePage cuts moto's whole answer to the page after the name after.
func onePage(out []byte, listKey, after string, size int) ([]byte, error) {
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
	type named struct {
		name string
		raw  json.RawMessage
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
	start := sort.Search(len(all), func(i int) bool { return all[i].name > after })
	if after == "" {
		start = 0
	}
	end := min(start+size, len(all))
	list := make([]json.RawMessage, 0, end-start)
	for _, n := range all[start:end] {
		list = append(list, n.raw)
	}
	resp[listKey], _ = json.Marshal(list)
	delete(resp, "NextToken")
	if end < len(all) {
		resp["NextToken"], _ = json.Marshal(base64.RawURLEncoding.EncodeToString([]byte(all[end-1].name)))
	}
	return json.Marshal(resp)
}
