package sync

import "sort"

// ReadOnlyCatalogs lists, sorted, the catalogs the kind found it cannot
// write (Unity Catalog without the Delta API: read with the classic API,
// every drift flagged), as a kind that can find such catalogs reports
// them.
func (r *Reconciler) ReadOnlyCatalogs() []string {
	ro, ok := r.opts.Catalog.(interface{ ReadOnlyCatalogs() []string })
	if !ok {
		return nil
	}
	out := ro.ReadOnlyCatalogs()
	sort.Strings(out)
	return out
}
