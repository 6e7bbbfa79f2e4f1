#!/usr/bin/env bash
# release.sh — the release artifacts, behind `make release` and run by CI
# (.ci/test.sh) so that a broken cross-build fails the run. Builds, does not
# publish. Into $DIST (default dist/):
#   deltasync-$VERSION-$GOOS-$GOARCH           static (CGO_ENABLED=0), -trimpath,
#                                              version stamped (-X main.version)
#   deltasync-$VERSION-$GOOS-$GOARCH.cdx.json  CycloneDX SBOM of the modules
#                                              linked into that binary and
#                                              its standard library
#   SHA256SUMS                                 of all of the above
# for linux and darwin on amd64 and arm64 (RELEASE_TARGETS to narrow it).
#
# Toolchain: go.mod stays at go 1.26 (so `go run ./cmd/deltasync demo` works
# on a stock Go 1.26), but releases are built with the approved newer
# toolchain, RELEASE_GOTOOLCHAIN (go1.27.3), which the go command fetches
# through the Go module proxy (golang.org/toolchain) on first use.
# deploy/vuln_test.go runs govulncheck against this toolchain's build.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "release: $*" >&2; }

RELEASE_GOTOOLCHAIN="${RELEASE_GOTOOLCHAIN:-go1.27.3}"
RELEASE_TARGETS="${RELEASE_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
VERSION="${VERSION:-$(git describe --always --dirty 2>/dev/null || echo dev)}"
DIST="${DIST:-dist}"
export DELTASYNC_CACHE="${DELTASYNC_CACHE:-$PWD/.cache}"

if [ -z "${DELTASYNC_CYCLONEDX_GOMOD:-}" ]; then
	eval "$(bash .ci/setup-cyclonedx.sh start)"
fi

export GOTOOLCHAIN="$RELEASE_GOTOOLCHAIN" CGO_ENABLED=0 GOFLAGS=-buildvcs=false
got="$(go env GOVERSION)"
if [ "$got" != "$RELEASE_GOTOOLCHAIN" ]; then
	log "GOTOOLCHAIN=$RELEASE_GOTOOLCHAIN gives $got: the release toolchain could not be had"
	exit 1
fi

rm -rf "$DIST"
mkdir -p "$DIST"
for target in $RELEASE_TARGETS; do
	os="${target%/*}" arch="${target#*/}"
	out="$DIST/deltasync-$VERSION-$os-$arch"
	start=$SECONDS
	GOOS="$os" GOARCH="$arch" go build -trimpath -tags disable_grpc_modules -ldflags "-s -w -X main.version=$VERSION" -o "$out" ./cmd/deltasync
	# The SBOM of what was linked: the binary's own module list (its build
	# info, from the module graph), the standard library (-std) included.
	"$DELTASYNC_CYCLONEDX_GOMOD" bin -json -std -version "$VERSION" -output "$out.cdx.json" "$out"
	log "$target: $out ($((SECONDS - start)) s)"
done
(cd "$DIST" && sha256sum deltasync-* >SHA256SUMS)
log "$DIST/SHA256SUMS: $(wc -l <"$DIST/SHA256SUMS") files, version $VERSION, $got"
