// Package uc is the Unity Catalog kind: a typed client for Unity Catalog's
// classic REST API and its Delta API (/delta/v1). It holds no reconcile
// logic: one method per API call, wire models with the exact JSON names of
// the API definitions, one typed error, and one retry policy. The neutral
// model it shares with the other kinds (table names, schema and protocol
// types, the refusal class) is the root package catalog.
//
// # Client
//
// New(baseURL, Options) builds a Client for a base URL ending in
// /api/2.1/unity-catalog (UC OSS and Databricks-hosted UC share the paths).
// Options carry the TokenSource (StaticToken, EnvToken, FileToken — re-read
// on rotation —, ClientCredentials for OAuth2 machine-to-machine (Databricks:
// token URL https://<workspace>/oidc/v1/token, scope all-apis), or any
// oauth2.TokenSource via OAuth2Token), a CA bundle (NewHTTPClient builds the
// same TLS client for a token endpoint), a per-attempt Timeout,
// the RetryPolicy, the User-Agent version and an Observer called after every
// HTTP attempt with the operationId (getConfig, loadTable, createTable,
// updateTable, tableExists, getTableCredentials, listCatalogs, listSchemas,
// listTables, getTable, deleteTable, createCatalog, createSchema, deleteCatalog,
// generateTemporaryTableCredentials), the status, the duration and the error.
//
// Classic API: ListCatalogs, ListSchemas, ListTables (all pages), GetTable,
// DeleteTable, CreateCatalog, CreateSchema, DeleteCatalog,
// TemporaryTableCredentials.
// Delta API: Config (ErrNoDeltaAPI on 404: fall back to read-only classic
// mode), LoadTable, CreateTable, UpdateTable, TableExists, TableCredentials
// and ReadCredentials (longest matching prefix, as a plain Credentials value).
//
// # Models
//
// Tables are named by catalog.TableName. LoadTableResponse /
// TableMetadata / Commit / CreateTableRequest are the kebab-case Delta
// models (with catalog.Protocol, catalog.StructType and
// catalog.DomainMetadata inside). UpdateTableRequest holds Requirements (AssertTableUUID,
// AssertEtag) and Updates (SetColumns, SetPartitionColumns, SetProtocol,
// SetProperties, RemoveProperties, SetTableComment, SetDomainMetadata,
// RemoveDomainMetadata, UpdateMetadataSnapshotVersion, AddCommit,
// SetLatestBackfilledVersion); it marshals to and from the exact wire shape
// with the `type` / `action` discriminators.
//
// The classic API's columns carry each top-level field as Spark JSON:
// ColumnsFromTypeJSON rebuilds the catalog.StructType from them. The server
// has no structured protocol on the read side: catalog.ProtocolFromProperties
// rebuilds it from the properties.
//
// # Errors and retries
//
// Every non-2xx answer is a *APIError{Status, Type, Message, Operation},
// parsed from either envelope (Delta {"error":{…}} or classic
// {"error_code",…}) or from the raw body. Branch with IsNotFound,
// IsConflict (409 assert-etag / assert-table-uuid), IsCommitConflict,
// IsAlreadyExists, IsUnauthorized, IsForbidden, IsUnsupportedFormat.
// 5xx, 429, timeouts, stalls and connection errors are retried (Retryable)
// by resending the identical request with capped, jittered exponential
// backoff that honours Retry-After; 409 and other 4xx return at once.
//
// A refusal (errors.Is(err, catalog.ErrRefused); AsRefusal gives the server's
// status, type and message) is an answer the same request gets every time:
// a 4xx other than 401/403/404/408/409/429, or UC's 500 "Value too long for
// column", which is not retried. UpdateTable and CreateTable check the
// widths UC stores values in (Limits, UCLimits: 255 characters for a
// property key or value and a top-level column name, 65,535 for a comment)
// and refuse a wider value with a *LimitError before sending it.
//
// # Bounds on what a server can cost
//
// An attempt that receives nothing for Options.IdleTimeout (default 10s,
// the wait for the first byte included) is given up with ErrStalled and
// retried once (a second stall in a row ends the request), while
// an answer that keeps arriving has the whole Timeout. A listing takes at
// most MaxListEntries entries (default 100,000) in 2×MaxListEntries/50+2
// pages; each page is read in one scan that refuses it at the first entry
// over max_results and past MaxListPageBytes (default 32 MiB), before the
// rest is read; a repeated or oversized page token ends it; each is an
// ErrListBound error naming the listing, not retried. A 2xx list body that
// is not a JSON object, or carries an error envelope, is an error (the
// envelope's *APIError, Status 200), never an empty listing.
//
// # Invariants
//
// The bearer token never appears in errors or in String() output. The
// package reads no environment, holds no package-level state and imports
// neither deltalog nor sync, nor another kind's package.
package uc
