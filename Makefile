# deltasync developer targets. `make test` is the one test command: it
# installs what the tests need (Python with deltalake, Azurite, promtool,
# Chromium), starts the services, runs `go test -race ./...` and stops them.
.PHONY: test unit demo build vet fmt bench uc-up uc-down

GO ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

test:
	bash .ci/test.sh

unit:
	$(GO) test ./...

demo:
	$(GO) run ./cmd/deltasync demo

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o bin/deltasync ./cmd/deltasync

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

uc-up:
	bash .ci/uc-server.sh up

uc-down:
	bash .ci/uc-server.sh down
