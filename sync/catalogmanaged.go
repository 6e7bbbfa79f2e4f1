package sync

import (
	"slices"
)

// The Delta protocol's catalogManaged feature (catalogOwned-preview before
// it was named) says the table's commits are ratified by its managing
// catalog: the newest ones may exist only as staged commits the catalog
// knows of, and the published _delta_log can lag them. A reader must go
// through the managing catalog; the published log alone is not the
// table's state.
var catalogManagedFeatures = []string{"catalogManaged", "catalogOwned-preview"}

// whyCatalogManagedLog is the reason a catalog-managed log under a record
// that is not MANAGED is flagged.
const whyCatalogManagedLog = "log is catalog-managed (%s) but the catalog's record is %s, not MANAGED: " +
	"the published log can lag the commits its managing catalog has ratified, so the record is never " +
	"written from it; register the table through its managing catalog, or exclude it"

// catalogManagedFeature returns the log's catalog-managed feature, or "".
func catalogManagedFeature(log *LogState) string {
	for _, f := range catalogManagedFeatures {
		if slices.Contains(log.Protocol.ReaderFeatures, f) || slices.Contains(log.Protocol.WriterFeatures, f) {
			return f
		}
	}
	return ""
}

// flagCatalogManagedLog flags res when the log is catalog-managed and the
// record is a plain EXTERNAL one (not MANAGED, and without the
// catalogManaged feature, which makes it watch-only: Record.Managed), with
// or without drift: nothing is written, and the comparison with the
// published log says nothing about the table's latest state. It reports
// whether it did.
func flagCatalogManagedLog(res *Result, rec *Record, log *LogState, plan Plan) bool {
	f := catalogManagedFeature(log)
	if f == "" || rec.Managed() {
		return false // a record that knows it is catalog-managed is watch-only already
	}
	d := flagDrift(StatusUnknown, ReasonUnsupported, whyCatalogManagedLog, f, textOr(rec.Table.Metadata.TableType, "of no type"))
	res.Outcome, res.Status, res.Reason, res.ErrorReason = OutcomeFlagged, d.status, d.reason, d.errorReason
	res.Plan = nil
	if !plan.Empty() {
		res.Plan = &plan
	}
	return true
}

func textOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}
