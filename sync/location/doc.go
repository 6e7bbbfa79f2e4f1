// Package location is the one place a storage location is spelled. A
// catalog, a configuration file and a storage notification name the same
// place in different ways (s3a:// and s3://, abfss://container@account…
// and az://account/container, file:/p and file:///p, trailing slashes,
// percent-encoding); this package turns each into the form its user
// compares in:
//
//   - Normalize: the way the catalog server stores a location (the diff
//     compares in it);
//   - Canonical and ObjectRoot: one scheme per store, the form storage
//     events are matched in (Index maps it to table names).
//
// Every function here is pure and a fixed point of itself: applying it to
// its own result changes nothing (fuzz_test.go holds it so).
package location
