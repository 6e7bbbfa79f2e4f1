# deltasync developer targets. `make test` is the one test command: it
# installs what the tests need under .cache (Python with deltalake, Azurite,
# golangci-lint, ...), starts the services, runs go vet, golangci-lint and
# `go test -race ./...` and stops them. System packages (promtool, Chromium,
# java for ElasticMQ) it installs only in CI (CI=true); on your machine it says
# what to install and the tests that need them skip.
.PHONY: test unit demo build release vet fmt bench docs uc-up uc-down spark-readback

GO ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

# The tests read the API definitions and real Delta logs of ../shared (the
# sibling checkout beside this repository); without it they cannot run.
SHARED ?= ../shared

test:
	@test -d "$(SHARED)/spec" -a -d "$(SHARED)/testdata/delta-logs" || { \
		echo "make test: $(SHARED)/spec and $(SHARED)/testdata/delta-logs are missing: check out the shared test data beside this repository, at $$(cd .. && pwd)/shared."; exit 1; }
	bash .ci/test.sh

unit:
	$(GO) test ./...

demo:
	$(GO) run ./cmd/deltasync demo

# build compiles with the same flags as `go run ./cmd/deltasync` and
# `go test`, so it reuses their build cache: -ldflags only changes the
# link step. (-trimpath or CGO_ENABLED=0 here would recompile every package.
# The static, -trimpath release build is `make release`'s and deploy/Dockerfile's.)
# -tags disable_grpc_modules: cloud.google.com/go/storage's own opt-out of
# the gRPC DirectPath modules (xDS with its envoy protos, RLS), which only
# its gRPC client uses; the GCS driver is its HTTP client. Without them
# the binary links ~140 fewer packages and starts faster (BENCHMARKS.md,
# "Process start-up"); only cloud.google.com/go/storage and what imports
# it are compiled again.
BUILD_TAGS ?= disable_grpc_modules
build:
	$(GO) build -tags "$(BUILD_TAGS)" -ldflags "-s -w -X main.version=$(VERSION)" -o bin/deltasync ./cmd/deltasync
	@echo "built bin/deltasync"

# release: static (CGO_ENABLED=0), -trimpath binaries for linux and darwin
# on amd64 and arm64, version stamped, a CycloneDX SBOM for each and
# SHA256SUMS, into dist/, built with the release toolchain (go1.27.3, fetched
# through the Go module proxy). See .ci/release.sh; CI runs it too.
# First .ci/reliability-gate.sh refuses to release while RELIABILITY.md was
# produced at another revision of sync/, deltalog/ or catalog/, or records
# failed tests (override: DELTASYNC_RELEASE_STALE_RELIABILITY=1); CI calls
# .ci/release.sh directly and is not gated.
release:
	bash .ci/reliability-gate.sh
	VERSION=$(VERSION) bash .ci/release.sh

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

# docs: regenerate docs/reference (CLI, config keys and JSON Schema,
# metrics, Helm values) from the code; `go test ./cmd/deltasync` fails
# while a generated file is stale.
docs:
	$(GO) run ./cmd/deltasync gen-docs

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

uc-up:
	bash .ci/uc-server.sh up

uc-down:
	bash .ci/uc-server.sh down

# spark-readback: the opt-in Spark read-back suite (sync/hms_spark_test.go),
# which `make test` and CI leave out (a 500 MiB venv, a 0.4-0.8 GiB Ivy cache
# and about a minute per metastore version): real Spark 4.2 + delta-spark
# 4.4.0 reads, through real HMS 4.0.1 and 3.1.3, tables delta-rs wrote and
# deltasync synced. Strict: a missing part fails it (DELTASYNC_REQUIRE_SPARK,
# DELTASYNC_REQUIRE_EXTERNAL). Metastores and delta-rs already in the
# environment (DELTASYNC_HMS4_URL and _HMS3_URL, DELTASYNC_PYTHON) are used
# as they are; otherwise the setup scripts start them, and stop the metastores
# after.
spark-readback:
	@set -e; export DELTASYNC_CACHE="$${DELTASYNC_CACHE:-$(CURDIR)/.cache}" DELTASYNC_REQUIRE_EXTERNAL=1 DELTASYNC_REQUIRE_SPARK=1; \
	mkdir -p "$$DELTASYNC_CACHE"; \
	if [ -z "$${DELTASYNC_PYTHON:-}" ]; then x="$$(bash .ci/setup-python.sh start)"; eval "$$x"; fi; \
	if [ -z "$${DELTASYNC_HMS4_URL:-}" ] || [ -z "$${DELTASYNC_HMS3_URL:-}" ]; then \
		trap 'bash .ci/setup-hms.sh stop' EXIT; x="$$(bash .ci/setup-hms.sh start)"; eval "$$x"; fi; \
	t0=$$(date +%s); x="$$(bash .ci/setup-spark.sh start)"; eval "$$x"; echo "setup-spark: $$(($$(date +%s) - t0)) s"; \
	t0=$$(date +%s); status=0; \
	$(GO) test -count=1 -timeout 30m -v -run '^TestHMSSparkReadBack$$' ./sync/ || status=$$?; \
	echo "spark-readback: go test $$(($$(date +%s) - t0)) s"; exit $$status
