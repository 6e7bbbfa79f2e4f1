package main

import (
	"fmt"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
)

// keyDoc documents one key of the config file. The keys themselves, their
// types and their defaults come from config (config.go) and defaultConfig;
// configKeys walks them and TestConfigDocsCoverEveryKey fails when a key
// has no entry here or an entry names no key. gen-docs renders these into
// docs/reference/config.md and docs/reference/config.schema.json.
type keyDoc struct {
	// Doc is the key's meaning, in Markdown.
	Doc string
	// Enum lists the values check-config accepts, when it accepts a fixed set.
	Enum []string
	// OrDuration: a duration is accepted besides Enum.
	OrDuration bool
	// Default describes the default where defaultConfig's value does not
	// say it (a 0 that means "computed", a section filled when present).
	Default string
	// Required: check-config refuses a config without it.
	Required bool
}

// configDocs is the documentation of every key path ("catalog.url",
// "tables[].mode"), sections included.
var configDocs = map[string]keyDoc{
	"catalog":      {Doc: "Where the catalog is and how deltasync signs in. A `https://` URL is Unity Catalog (OSS and Databricks alike), a `thrift://` URL a Hive Metastore, a `glue://` URL the AWS Glue Data Catalog."},
	"catalog.url":  {Required: true, Doc: "Unity Catalog's base URL ending in `/api/2.1/unity-catalog` (UC OSS and Databricks alike), a Hive Metastore's `thrift://host:9083`, or the AWS Glue Data Catalog's `glue://REGION[?catalog_id=ACCOUNT][&endpoint=URL][&archive=true][&max_attempts=N]` (credentials: the AWS SDK's default chain; see docs/kinds/glue.md)."},
	"catalog.name": {Default: "`hive` (Glue: `awsdatacatalog`)", Doc: "Hive Metastore and Glue only: the first part of their tables' names, `<name>.<db>.<table>`, as the `tables` rules see them. Glue's default is the name Athena and Redshift give the Glue Data Catalog."},
	"catalog.columns": {Enum: []string{"placeholder", "real"}, Default: "`placeholder`",
		Doc: "Hive Metastore only: `placeholder` writes Spark's `col array<string>` (only at registration), `real` the table's columns as Hive types."},
	"catalog.token_file":               {Doc: "File holding the bearer token; re-read when it changes (rotated Kubernetes secrets work). At most one of `token_file`, `token_env` and `oauth`."},
	"catalog.token_env":                {Doc: "Name of an environment variable holding the bearer token. At most one of `token_file`, `token_env` and `oauth`."},
	"catalog.oauth":                    {Doc: "OAuth2 client credentials (Databricks service principals: token URL `https://<workspace>/oidc/v1/token`, scope `all-apis`). At most one of `token_file`, `token_env` and `oauth`."},
	"catalog.oauth.client_id":          {Required: true, Doc: "The OAuth client id."},
	"catalog.oauth.client_secret_file": {Required: true, Doc: "File holding the OAuth client secret."},
	"catalog.oauth.token_url":          {Doc: "The token endpoint (`https://<workspace>/oidc/v1/token` on Databricks)."},
	"catalog.oauth.scopes":             {Doc: "Scopes to request (`all-apis` on Databricks)."},
	"catalog.ca_file":                  {Default: "the system roots", Doc: "PEM file of the CA certificates the catalog's TLS certificate is checked against."},
	"catalog.insecure_skip_verify":     {Doc: "Turns TLS verification off (tests only)."},
	"catalog.timeout":                  {Doc: "Timeout of one catalog request attempt."},
	"catalog.max_rps":                  {Default: "0 (no cap)", Doc: "Catalog requests per second for the whole process (one token bucket); a 429's `Retry-After` holds every request."},
	"catalog.max_retry_after":          {Doc: "Cap on one wait for a server's `Retry-After`; waits of 3s or more are logged with their reason."},
	"catalog.idle_timeout": {Doc: "An attempt that receives nothing for this long (the wait for the first byte included) is given up and retried once " +
		"(a second stall in a row ends the request: a stalled server costs about 2 × this, not 4 × `timeout`); a slow answer that keeps arriving has the whole `timeout`."},
	"catalog.max_list_entries": {Doc: "The most entries one listing (catalogs, schemas of a catalog, tables of a schema) may hold, in at most 2 × `max_list_entries`/50 + 2 pages " +
		"(a page may come back short or empty with a token); a longer or endless listing is an error naming it, and tables named one by one still run."},

	"tables": {Doc: "Which tables deltasync reconciles, and how. `catalog.schema.table` globs per dotted part; `!` excludes; the first matching rule wins; " +
		"a literal name is an explicit table. Required unless `--include` is passed or `register` rules are set."},
	"tables[].include": {Required: true, Doc: "Patterns this rule selects (one string or a list): `main.sales.*` is every table of `main.sales`, `main.s` is schema `main`, table `s`, in any catalog; `!*.tmp_*` excludes."},
	"tables[].exclude": {Doc: "Patterns this rule leaves out."},
	"tables[].mode": {Enum: []string{"sync", "warn"}, Default: "`sync`",
		Doc: "`sync` writes EXTERNAL tables' records; `warn` only flags their drift (catalog-managed tables are always watch-only)."},
	"tables[].on_destructive": {Enum: []string{"sync", "hold"}, Default: "`sync`",
		Doc: "`hold` holds a table whose update carries a destructive change whole, for `plan --out` / `apply` (see [change control](../change-control.md)); `sync`: the log wins."},

	"ignore_properties":     {Doc: "Property globs never compared or synced."},
	"ignore_field_metadata": {Doc: "Field-metadata key globs left out of the schema comparison, besides `delta.identity.highWaterMark` (always)."},
	"watermark_updates": {Enum: []string{"every_cycle", "with_changes"}, OrDuration: true,
		Doc: "When an update that only advances the version watermark (a data-only commit) is sent: `every_cycle`; `with_changes` (only together with a metadata change); " +
			"or a duration (`15m`: once the recorded version's commit is that old). See [what a watermark-only write costs](../how-a-sync-works.md#what-a-watermark-only-write-costs)."},
	"credentials": {Enum: []string{"ambient", "vended"},
		Doc: "`vended`: READ credentials from the catalog per table; `ambient`: the process's own cloud credentials (each SDK's default chain; Azure: `AZURE_STORAGE_ACCOUNT` + `AZURE_STORAGE_KEY`, " +
			"then `AZURE_STORAGE_SAS_TOKEN`, then `AZURE_STORAGE_CONNECTION_STRING`, else default Azure credentials, as gocloud's opener). A Hive Metastore vends none."},
	"schedule": {Doc: "When `run` starts cycles: `@every 1m` or a cron expression; `@every` below 1s is refused. `once` ignores it."},
	"jitter":   {Doc: "Random delay added before each scheduled cycle."},
	"concurrency": {Doc: "Catalog requests of full reconciles in flight at once: each reconcile takes one of these turns for each catalog call " +
		"(the catalog client keeps as many idle connections; HTTP/2 where offered)."},
	"read_concurrency": {Default: fmt.Sprintf("%d (0: the default)", sync.DefaultReadConcurrency),
		Doc: "Tables read in full at once (first cycle, drifted tables, resyncs), never below `concurrency`: a full read is 3–6 storage round trips, so on an object store more tables wait on storage " +
			"at once than talk to the catalog; their catalog calls still take `concurrency` turns. Each full read may hold up to `storage.max_load_mib`, and all of them together `storage.max_read_mib` " +
			"(+ one `max_load_mib`), not `read_concurrency` × `max_load_mib`: when many large checkpoints are read at once, the reads beyond it wait for memory."},
	"resync_interval": {Doc: "A table found in sync is confirmed from the listing (same `updated_at`) and one LIST of its log (no newer version), with no per-table catalog request; " +
		"with events, a table no notification named skips even the LIST; every table is fully re-read at least this often. 0: every cycle."},
	"backoff":            {Doc: "Per-table retry spacing after failures (exponential, from `initial` to `max`)."},
	"backoff.initial":    {Doc: "The first wait after a table fails."},
	"backoff.max":        {Doc: "The longest wait between a failing table's attempts."},
	"max_cycle_duration": {Doc: "`run`'s `/readyz` answers 503 while a cycle has been running longer (0: never)."},
	"listen":             {Doc: "HTTP address of `run` (`/metrics`, `/healthz`, `/readyz`, the status page). The page and `/metrics` name tables and locations: bind to loopback or set `http.token_file`."},
	"http":               {Doc: "Securing `run`'s HTTP endpoints."},
	"http.token_file":    {Doc: "Bearer token required on `/metrics` and `/` (the probes `/healthz` and `/readyz` stay open)."},
	"heartbeat_url":      {Doc: "GET after each successful cycle (a dead man's switch)."},
	"pushgateway":        {Doc: "Push `once`'s metrics to a Prometheus Pushgateway."},
	"pushgateway.url":    {Doc: "The Pushgateway's URL; unset: nothing is pushed."},
	"pushgateway.job":    {Doc: "The job label pushed under (the alert rules expect `deltasync`)."},
	"shard":              {Default: "all tables", Doc: "`i/N`: only tables whose FNV-1a hash of the lower-cased full name mod N is i."},
	"log":                {Doc: "zap logs on stderr."},
	"log.format":         {Enum: []string{"json", "console"}, Doc: "`json`, or `console` for humans."},
	"log.level":          {Enum: []string{"debug", "info", "warn", "error"}, Doc: "The lowest level logged."},

	"storage": {Doc: "Which storage locations catalog records may name and how each bucket is reached; catalog records never carry driver options."},
	"storage.allowed_locations": {Default: "every `s3`, `gs`, `azblob`, `abfss` bucket; no local path",
		Doc: "Globs (`s3://lake/warehouse/**`) a table's location must match to be read; see [storage access](../security.md#storage-access-and-secrets)."},
	"storage.buckets":            {Doc: "Driver options per bucket."},
	"storage.buckets[].location": {Required: true, Doc: "The bucket, `scheme://bucket` (`s3://lake`, `azblob://container`)."},
	"storage.buckets[].options":  {Doc: "gocloud URL parameters of the bucket (`s3://lake`: `region`, `endpoint`, `use_path_style`, ...; `azblob://c`: `storage_account`, ...)."},
	"storage.max_load_mib": {Doc: "Memory budget of one table's log read (MiB): the most bytes of its log files (commits being parsed, checkpoint blocks and pages) one Load or Refresh holds at once; " +
		"a table over it is flagged with the file and the budget, and its record is not written."},
	"storage.max_read_mib": {Default: fmt.Sprintf("%d, or half the container's memory limit when less; never below `max_load_mib`", defaultMaxReadMiB),
		Doc: "Memory all log reads of the process share (MiB): the most bytes of log files the tables read at once hold together, at least `storage.max_load_mib`; a read that does not fit waits " +
			"for others to finish (a table never fails for it; `deltasync_log_read_memory_wait_seconds_total` counts the waits), and the oldest read always goes on, so the most held is " +
			"`max_read_mib` + one `max_load_mib`; 0: the default."},
	"storage.max_in_flight": {Doc: "Object-store requests (LIST, GET, HEAD) in flight in the process, over all buckets; apart from `concurrency`: on S3, GCS or Azure each request is a round trip, " +
		"so this, not the CPU, bounds how many tables a cycle checks (see [a fleet on an object store](../operating/scaling.md))."},
	"storage.max_in_flight_per_bucket": {Doc: "The same per bucket (S3 or GCS bucket, Azure account and container), at most `storage.max_in_flight`; a throttled bucket (S3 503 SlowDown; " +
		"GCS 429 and 503; Azure 503 ServerBusy, 429 and 500 OperationTimedOut) backs off alone, its tables sharing one backoff with jitter and the answer's Retry-After, and tables on other " +
		"buckets go on; while throttled it keeps fewer in flight (halved per window of throttled requests, one more per that many successes, back up to this setting, never below 1)."},

	"events":               {Doc: "`run`: storage notifications that sync a commit in seconds (see [events](../events.md)). A list of subscription URLs, or a mapping with the keys below."},
	"events.subscriptions": {Doc: "gocloud.dev/pubsub subscription URLs: `awssqs://` (alias `awssnssqs://`), `gcppubsub://`, `azuresb://`, `kafka://`, `nats://`, `rabbit://`, `mem://`."},
	"events.debounce":      {Default: "`250ms`", Doc: "How long events for one table are gathered before its reconcile."},
	"events.queue_size":    {Default: "1024", Doc: "Tables waiting for a reconcile; while it is full no more messages are received."},
	"events.max_wait":      {Default: "`2m`", Doc: "How long a message is retried (a commit not visible yet, a create that failed) before it is returned to the broker."},

	"notify": {Doc: "`once`, `run` and `apply`: one change event per table outcome that matters (synced, held, refused, flagged, registered, orphaned), sent to OpenLineage, a pubsub topic " +
		"and/or a webhook (see [notifications](../notifications.md)). Delivery never holds a sync back: each sink has a bounded queue, retries with backoff, and counts what it drops."},
	"notify.instance":                 {Default: "the host name", Doc: "This deltasync's name in every event (CloudEvents `source` `deltasync/<instance>`)."},
	"notify.queue_size":               {Default: "1000", Doc: "Events waiting per sink; when it is full, new events to that sink are dropped and counted (`deltasync_notify_dropped_total{reason=\"queue_full\"}`)."},
	"notify.max_attempts":             {Default: "10", Doc: "Deliveries of one event before it is dropped (`reason=\"retries\"`); waits between them double from 1s up to 1m, jittered. A 4xx other than 408 and 429 is not retried (`reason=\"rejected\"`)."},
	"notify.timeout":                  {Default: "`10s`", Doc: "Bound on one delivery attempt."},
	"notify.drain":                    {Default: fmt.Sprintf("`%s`", defaultNotifyDrain), Doc: "At shutdown, how long queued events are still delivered; what is left is counted as dropped (`reason=\"shutdown\"`)."},
	"notify.openlineage":              {Doc: "Send each event as an OpenLineage RunEvent (schema, symlinks, catalog, dataset version and `deltasync_changes` facets) over its HTTP transport."},
	"notify.openlineage.url":          {Required: true, Doc: "The OpenLineage endpoint's base URL (Marquez `http://marquez:5000`); events are POSTed to `{url}/api/v1/lineage`."},
	"notify.openlineage.api_key_file": {Doc: "File holding the API key, sent as `Authorization: Bearer <key>`. At most one of `api_key_file` and `api_key_env`."},
	"notify.openlineage.api_key_env":  {Doc: "Name of an environment variable holding the API key."},
	"notify.openlineage.namespace":    {Default: "`deltasync`", Doc: "The OpenLineage job namespace of deltasync's runs."},
	"notify.pubsub":                   {Doc: "Send each event as a CloudEvent (1.0, structured JSON) to a topic."},
	"notify.pubsub.url":               {Required: true, Doc: "gocloud.dev/pubsub topic URL: `awssqs://`, `awssns://`, `gcppubsub://`, `azuresb://`, `kafka://`, `nats://` (server in `NATS_SERVER_URL`), `rabbit://`, `mem://`."},
	"notify.webhook":                  {Doc: "POST each event to a URL: the CloudEvent (structured JSON), or what `template` renders (a chat message)."},
	"notify.webhook.url":              {Doc: "The webhook URL (one of `url` and `url_env`). Only its scheme and host are ever logged."},
	"notify.webhook.url_env":          {Doc: "Name of an environment variable holding the webhook URL (a URL carrying a token, as Slack's do)."},
	"notify.webhook.template":         {Doc: "Go text/template of the body, given the event (`.Kind`, `.Table`, `.LogVersion`, `.Location`, `.Reason`, `.Changes`, ...; `json` quotes a value), e.g. `{\"text\": {{json .Table}}}`."},
	"notify.webhook.headers":          {Doc: "Headers sent with every request."},
	"notify.webhook.headers[].name":   {Required: true, Doc: "The header's name."},
	"notify.webhook.headers[].value":  {Doc: "Its value (one of `value`, `env` and `file`)."},
	"notify.webhook.headers[].env":    {Doc: "Name of an environment variable holding its value (a secret)."},
	"notify.webhook.headers[].file":   {Doc: "File holding its value (a secret)."},

	"register":                  {Doc: "Create the catalog records of Delta tables found in storage under location templates, and maintain them (see [registering tables](../registering-tables.md)). Opt-in: with no rule nothing is created."},
	"register.rules":            {Required: true, Doc: "Location templates and the names they map to."},
	"register.rules[].location": {Required: true, Doc: "A location template (`s3://lake/warehouse/{schema}/{table}`; `{name}`: one whole path segment), inside `storage.allowed_locations`."},
	"register.rules[].name":     {Required: true, Doc: "`catalog.schema.table` from those names (`main.{schema}.{table}`)."},
	"register.interval":         {Default: fmt.Sprintf("`%s`", defaultRegisterInterval), Doc: "How often discovery re-lists the templates (`plan` and `once` always discover); 0: every cycle."},
	"register.max_per_cycle":    {Default: fmt.Sprint(defaultRegisterMaxPerCycle), Doc: "Creations per cycle; the rest wait, reported as `would_register`. 0: no bound."},
	"register.create_schemas":   {Doc: "Create a missing schema instead of flagging its tables (catalogs are never created)."},

	"audit":              {Doc: "The audit trail: one JSON record per catalog write, or write refused or held, appended and fsynced, rotated by size (see [change control](../change-control.md))."},
	"audit.file":         {Doc: "The JSON-lines file; `-` is stderr."},
	"audit.max_size_mib": {Default: fmt.Sprint(audit.DefaultMaxBytes >> 20), Doc: "Rotate the file past this size (MiB)."},
	"audit.max_backups":  {Default: fmt.Sprint(audit.DefaultBackups), Doc: "How many rotated files are kept."},
	"audit.stderr":       {Doc: "Also write every record to stderr."},
}
