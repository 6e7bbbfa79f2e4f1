// Package contract is the one contract suite for Unity Catalog servers: it
// pins, over raw HTTP and JSON (not through package catalog), the wire
// behaviour deltasync relies on, as described in
// ../shared/docs/uc-delta-api.md. contract_test.go runs it against the
// in-memory uctest server always, and against a real server when
// DELTASYNC_UC_URL is set (see .ci/setup-uc.sh and `make uc-up`).
//
// Where the API definitions and the real server disagree, the suite pins
// what the real server does. Every behaviour it asserts must hold on both
// servers. Names are unique per run, so it can run against a long-lived
// server; file:// locations come from t.TempDir().
package contract
