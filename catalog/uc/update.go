package uc

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/deltasync/deltasync/catalog"
)

// UpdateTableRequest is the Delta API's DeltaUpdateTableRequest. It marshals
// to {"requirements":[…],"updates":[…]} with the `type` / `action`
// discriminators. Every request needs an AssertTableUUID; the server applies
// updates in its own canonical order, so their order here does not matter.
type UpdateTableRequest struct {
	Requirements []Requirement
	Updates      []Update
}

// Requirement is an updateTable pre-condition: AssertTableUUID or AssertEtag.
type Requirement interface {
	// RequirementType returns the wire discriminator, e.g. "assert-etag".
	RequirementType() string
}

// Update is an updateTable action. The concrete types are SetColumns,
// SetPartitionColumns, SetProtocol, SetProperties, RemoveProperties,
// SetTableComment, SetDomainMetadata, RemoveDomainMetadata,
// UpdateMetadataSnapshotVersion, AddCommit and SetLatestBackfilledVersion.
type Update interface {
	// Action returns the wire discriminator, e.g. "set-properties".
	Action() string
}

// AssertTableUUID requires the table's UUID to equal UUID.
type AssertTableUUID struct {
	UUID string `json:"uuid"`
}

// AssertEtag requires the table's etag (before the update) to equal Etag.
type AssertEtag struct {
	Etag string `json:"etag"`
}

// SetColumns replaces the whole column list.
type SetColumns struct {
	Columns catalog.StructType `json:"columns"`
}

// SetPartitionColumns replaces the partition list; empty means unpartitioned.
type SetPartitionColumns struct {
	Columns []string `json:"partition-columns"`
}

// SetProtocol replaces the protocol (its property projection) entirely.
type SetProtocol struct {
	Protocol catalog.Protocol `json:"protocol"`
}

// SetProperties merges Updates into the stored properties.
type SetProperties struct {
	Updates map[string]string `json:"updates"`
}

// RemoveProperties deletes keys; removing a missing key is a no-op.
type RemoveProperties struct {
	Removals []string `json:"removals"`
}

// SetTableComment sets the table comment.
type SetTableComment struct {
	Comment string `json:"comment"`
}

// SetDomainMetadata sets the delta.clustering and/or delta.rowTracking
// domains (at least one must be non-nil). Clustering paths use physical
// names when column mapping is on.
type SetDomainMetadata struct {
	Clustering         *[][]string
	RowIDHighWaterMark *int64
}

// RemoveDomainMetadata removes domains ("delta.clustering", "delta.rowTracking").
type RemoveDomainMetadata struct {
	Domains []string `json:"domains"`
}

// UpdateMetadataSnapshotVersion records the log version UC is synced to
// (EXTERNAL tables only).
type UpdateMetadataSnapshotVersion struct {
	LastCommitVersion     int64 `json:"last-commit-version"`
	LastCommitTimestampMs int64 `json:"last-commit-timestamp-ms"`
}

// AddCommit ratifies a staged commit (MANAGED tables only). deltasync does
// not write commits; the type exists for completeness and tests.
type AddCommit struct {
	Commit  Commit          `json:"commit"`
	Uniform json.RawMessage `json:"uniform,omitempty"`
}

// SetLatestBackfilledVersion reports a backfill (MANAGED tables only).
type SetLatestBackfilledVersion struct {
	LatestPublishedVersion int64 `json:"latest-published-version"`
}

// RequirementType implements Requirement.
func (AssertTableUUID) RequirementType() string { return "assert-table-uuid" }

// RequirementType implements Requirement.
func (AssertEtag) RequirementType() string { return "assert-etag" }

// Action implements Update.
func (SetColumns) Action() string { return "set-columns" }

// Action implements Update.
func (SetPartitionColumns) Action() string { return "set-partition-columns" }

// Action implements Update.
func (SetProtocol) Action() string { return "set-protocol" }

// Action implements Update.
func (SetProperties) Action() string { return "set-properties" }

// Action implements Update.
func (RemoveProperties) Action() string { return "remove-properties" }

// Action implements Update.
func (SetTableComment) Action() string { return "set-table-comment" }

// Action implements Update.
func (SetDomainMetadata) Action() string { return "set-domain-metadata" }

// Action implements Update.
func (RemoveDomainMetadata) Action() string { return "remove-domain-metadata" }

// Action implements Update.
func (UpdateMetadataSnapshotVersion) Action() string { return "update-metadata-snapshot-version" }

// Action implements Update.
func (AddCommit) Action() string { return "add-commit" }

// Action implements Update.
func (SetLatestBackfilledVersion) Action() string { return "set-latest-backfilled-version" }

// MarshalJSON writes the wire shape.
func (r UpdateTableRequest) MarshalJSON() ([]byte, error) {
	reqs := make([]json.RawMessage, 0, len(r.Requirements))
	for _, q := range r.Requirements {
		b, err := withDiscriminator("type", q.RequirementType(), q)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, b)
	}
	ups := make([]json.RawMessage, 0, len(r.Updates))
	for _, u := range r.Updates {
		b, err := marshalUpdate(u)
		if err != nil {
			return nil, err
		}
		ups = append(ups, b)
	}
	return json.Marshal(struct {
		Requirements []json.RawMessage `json:"requirements"`
		Updates      []json.RawMessage `json:"updates"`
	}{reqs, ups})
}

// derefUpdate turns a pointer to an update type into the value, so both
// forms marshal and validate alike.
func derefUpdate(u Update) Update {
	if v := reflect.ValueOf(u); v.Kind() == reflect.Pointer && !v.IsNil() {
		if d, ok := v.Elem().Interface().(Update); ok {
			return d
		}
	}
	return u
}

func marshalUpdate(u Update) ([]byte, error) {
	if u == nil || reflect.ValueOf(u).Kind() == reflect.Pointer && reflect.ValueOf(u).IsNil() {
		return nil, fmt.Errorf("catalog: nil update")
	}
	switch v := derefUpdate(u).(type) {
	case SetDomainMetadata:
		return withDiscriminator("action", v.Action(), struct {
			Updates catalog.DomainMetadata `json:"updates"`
		}{catalog.DomainMetadata(v)})
	case SetProperties:
		if v.Updates == nil {
			v.Updates = map[string]string{}
		}
		return withDiscriminator("action", v.Action(), v)
	case RemoveProperties:
		if v.Removals == nil {
			v.Removals = []string{}
		}
		return withDiscriminator("action", v.Action(), v)
	case SetPartitionColumns:
		if v.Columns == nil {
			v.Columns = []string{}
		}
		return withDiscriminator("action", v.Action(), v)
	case RemoveDomainMetadata:
		if v.Domains == nil {
			v.Domains = []string{}
		}
		return withDiscriminator("action", v.Action(), v)
	default:
		return withDiscriminator("action", v.Action(), v)
	}
}

// withDiscriminator marshals v (a JSON object) with key:value first.
func withDiscriminator(key, value string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("catalog: %s %s: %w", key, value, err)
	}
	head := fmt.Appendf(nil, "{%q:%q", key, value)
	if string(body) == "{}" {
		return append(head, '}'), nil
	}
	return append(append(head, ','), body[1:]...), nil
}

// UnmarshalJSON reads the wire shape; an unknown discriminator is an error.
func (r *UpdateTableRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		Requirements []json.RawMessage `json:"requirements"`
		Updates      []json.RawMessage `json:"updates"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = UpdateTableRequest{}
	for i, raw := range w.Requirements {
		q, err := decodeRequirement(raw)
		if err != nil {
			return fmt.Errorf("catalog: requirements[%d]: %w", i, err)
		}
		r.Requirements = append(r.Requirements, q)
	}
	for i, raw := range w.Updates {
		u, err := decodeUpdate(raw)
		if err != nil {
			return fmt.Errorf("catalog: updates[%d]: %w", i, err)
		}
		r.Updates = append(r.Updates, u)
	}
	return nil
}

func decodeRequirement(raw json.RawMessage) (Requirement, error) {
	var d struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	switch d.Type {
	case "assert-table-uuid":
		var v AssertTableUUID
		return v, json.Unmarshal(raw, &v)
	case "assert-etag":
		var v AssertEtag
		return v, json.Unmarshal(raw, &v)
	}
	return nil, fmt.Errorf("unknown requirement type %q", d.Type)
}

func decodeUpdate(raw json.RawMessage) (Update, error) {
	var d struct {
		Action string `json:"action"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	var u Update
	switch d.Action {
	case "set-columns":
		u = &SetColumns{}
	case "set-partition-columns":
		u = &SetPartitionColumns{}
	case "set-protocol":
		u = &SetProtocol{}
	case "set-properties":
		u = &SetProperties{}
	case "remove-properties":
		u = &RemoveProperties{}
	case "set-table-comment":
		u = &SetTableComment{}
	case "set-domain-metadata":
		var w struct {
			Updates catalog.DomainMetadata `json:"updates"`
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Action, err)
		}
		return SetDomainMetadata(w.Updates), nil
	case "remove-domain-metadata":
		u = &RemoveDomainMetadata{}
	case "update-metadata-snapshot-version":
		u = &UpdateMetadataSnapshotVersion{}
	case "add-commit":
		u = &AddCommit{}
	case "set-latest-backfilled-version":
		u = &SetLatestBackfilledVersion{}
	default:
		return nil, fmt.Errorf("unknown update action %q", d.Action)
	}
	if err := json.Unmarshal(raw, u); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Action, err)
	}
	// Return values, not pointers, so callers can type-switch on the value types.
	return reflect.ValueOf(u).Elem().Interface().(Update), nil
}
