// Package catalog is a typed client for Unity Catalog's classic REST API and
// its Delta API (/delta/v1). It holds no reconcile logic: one method per API
// call, wire models with the exact JSON names of the API definitions, one
// typed error, and one retry policy that follows the commit-recovery rules.
//
// catalog imports neither deltalog nor sync.
package catalog
