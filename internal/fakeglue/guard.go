package fakeglue

import (
	"encoding/json"
	"net/http"
	"sync"
)

// updateTable enforces UpdateTable's VersionId, which moto ignores. Glue's
// API reference (UpdateTable, VersionId: "The version ID at which to
// update the table contents"; errors: ConcurrentModificationException,
// 400) makes it a whole-table optimistic lock: a VersionId that is not the
// table's current one fails the update. The proxy reads the current
// VersionId from moto (GetTable) and forwards the update only if it
// matches, both under a per-table lock, so two updates with the same
// VersionId cannot both pass: exactly one wins, as on Glue. An update
// without VersionId is not guarded (Glue's too). SkipArchive is recorded;
// moto archives anyway.
func (p *Proxy) updateTable(w http.ResponseWriter, r *http.Request, body []byte) {
	var in struct {
		CatalogID    *string `json:"CatalogId"`
		DatabaseName string
		TableInput   struct{ Name string }
		VersionID    *string `json:"VersionId"`
		SkipArchive  *bool
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "SerializationException", "fakeglue: UpdateTable body: "+err.Error())
		return
	}
	u := Update{Database: in.DatabaseName, Table: in.TableInput.Name, SkipArchive: in.SkipArchive}
	if in.VersionID != nil {
		u.VersionID = *in.VersionID
	}
	mu := p.recordUpdate(u)
	mu.Lock()
	defer mu.Unlock()
	if in.VersionID != nil {
		status, out, err := p.call(r, "GetTable", map[string]any{
			"CatalogId": in.CatalogID, "DatabaseName": in.DatabaseName, "Name": in.TableInput.Name,
		})
		if err != nil {
			writeError(w, http.StatusBadGateway, "InternalServiceException", "fakeglue: upstream GetTable: "+err.Error())
			return
		}
		if status == http.StatusOK {
			var cur struct {
				Table struct {
					VersionID string `json:"VersionId"`
				}
			}
			if err := json.Unmarshal(out, &cur); err != nil {
				writeError(w, http.StatusBadGateway, "InternalServiceException", "fakeglue: upstream GetTable: "+err.Error())
				return
			}
			if cur.Table.VersionID != *in.VersionID {
				// The message is Glue's own (as the AWS SDK for Java reports it).
				writeError(w, http.StatusBadRequest, "ConcurrentModificationException",
					"Update table failed due to concurrent modifications.")
				return
			}
		}
		// Not 200 (no such table or database): moto's answer to the update
		// is Glue's (EntityNotFoundException).
	}
	p.forward(w, r, body)
}

func (p *Proxy) recordUpdate(u Update) *sync.Mutex {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.updates = append(p.updates, u)
	key := u.Database + "\x00" + u.Table
	mu, ok := p.tableMus[key]
	if !ok {
		mu = &sync.Mutex{}
		p.tableMus[key] = mu
	}
	return mu
}
