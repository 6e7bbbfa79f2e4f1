package sync

import "github.com/deltasync/deltasync/sync/plan"

// whyCatalogManagedLog is the reason a catalog-managed log under a record
// that is not MANAGED is flagged.
const whyCatalogManagedLog = "log is catalog-managed (%s) but the catalog's record is %s, not MANAGED: " +
	"the published log can lag the commits its managing catalog has ratified, so the record is never " +
	"written from it; register the table through its managing catalog, or exclude it"

// catalogManagedLog flags a table whose log is catalog-managed and whose
// record is a plain EXTERNAL one (not MANAGED, and without the
// catalogManaged feature, which makes it watch-only: Record.Managed), with
// or without drift: nothing is written, and the comparison with the
// published log says nothing about the table's latest state. ok reports
// whether it does.
func catalogManagedLog(rec *plan.Record, log *plan.LogState) (ru ruling, ok bool) {
	f := log.CatalogManagedFeature()
	if f == "" || rec.Managed() {
		return ruling{}, false // a record that knows it is catalog-managed is watch-only already
	}
	return flagDrift(StatusUnknown, ReasonUnsupported, whyCatalogManagedLog, f, textOr(rec.Type, "of no type")), true
}

func textOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}
