package catalog

import "slices"

// The Delta protocol's catalogManaged feature (catalogOwned-preview before
// it was named) says the table's commits are ratified by its managing
// catalog: the newest ones may exist only as staged commits the catalog
// knows of, and the published _delta_log can lag them. A reader must go
// through the managing catalog; the published log alone is not the
// table's state.
var catalogManagedFeatures = []string{"catalogManaged", "catalogOwned-preview"}

// CatalogManagedFeature returns the log's catalog-managed feature, or "".
func (l *LogState) CatalogManagedFeature() string {
	for _, f := range catalogManagedFeatures {
		if slices.Contains(l.Protocol.ReaderFeatures, f) || slices.Contains(l.Protocol.WriterFeatures, f) {
			return f
		}
	}
	return ""
}
