// Package fakeglue is a test proxy in front of moto (.ci/setup-moto.sh)
// that answers as AWS Glue's documentation says where moto does not, so
// the Glue catalog kind is tested against Glue's behaviour, not moto's:
//
//   - UpdateTable with a VersionId that is not the table's current one is
//     refused with 400 ConcurrentModificationException (moto accepts any);
//     the check and the forward run under a per-table lock, so of two
//     updates from the same VersionId exactly one wins.
//   - GetTables and GetDatabases are paged: MaxResults 1..100 (default
//     100; outside: 400 ValidationException), an opaque NextToken when
//     more follow (moto returns everything in one page). A listing's
//     pages are cut from one moto answer, taken at its first page.
//   - Every UpdateTable is recorded as sent (VersionId, SkipArchive:
//     moto archives regardless), and every Glue call counted per
//     operation (X-Amz-Target), for request-count tests.
//   - Faults for kinds' fault tests: an injected latency, a held request
//     (released by the test), and injected errors in Glue's awsJson1_1
//     shape (AccessDenied, ThrottlingException,
//     ResourceNumberLimitExceededException, EntityNotFound, 5xx).
//
// Everything else (moto's S3, other Glue calls) passes through unchanged.
// contract_test.go pins these answers with the AWS SDK for Go v2 client,
// and moto_test.go pins what moto itself still gets wrong, so the proxy
// can be dropped (or must change) when moto does.
package fakeglue
