#!/usr/bin/env bash
# fuzz.sh — run every Go fuzz target for a fixed time budget.
#
#   .ci/fuzz.sh                      every target, DELTASYNC_FUZZTIME each (default 15s)
#   .ci/fuzz.sh FuzzSelector ...     only the named targets
#
# Targets are found by `go test -list '^Fuzz'`, so a new one is fuzzed without
# editing this script. A failing input is written by Go to
# <pkg>/testdata/fuzz/<Target>/ (commit it: from then on plain `go test` runs
# it as a regression case) and the script exits 1 after the other targets
# ran. DELTASYNC_FUZZ_SAVE=1 also copies the new interesting inputs the fuzzer
# found (its cache corpus) into <pkg>/testdata/fuzz/<Target>/, to commit.
# DELTASYNC_FUZZ_PARALLEL sets the fuzz workers per target (default 2),
# DELTASYNC_FUZZ_MINIMIZETIME how long a new input is minimized (default 1s).
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME="${DELTASYNC_FUZZTIME:-15s}"
PARALLEL="${DELTASYNC_FUZZ_PARALLEL:-2}"
# Go minimizes every new interesting input for up to 60 s by default,
# which spent a 15 s run on one input: FuzzCheckpointRows (inputs of
# several KB) stayed at "execs: 34, new interesting: 0" while its worker
# minimized; with 1 s it finds ~20 new inputs in the same 15 s.
MINIMIZE="${DELTASYNC_FUZZ_MINIMIZETIME:-1s}"
# The fuzzing engine of the release toolchain, not go.mod's: Go 1.26's
# coordinator can fail a duration-bounded run with "context deadline
# exceeded" as -fuzztime ends, with no failing input (golang/go#75804: the
# fuzz context's deadline reaches the coordinator before its child's
# cancellation; fixed in Go 1.27.0). CI failed on it twice in a row on
# FuzzParseAPIError, a target that cannot hang. The release toolchain is
# the approved newer one (.ci/release.sh), fetched through the Go module
# proxy, so the fix is had without retrying or hiding a failure. Its
# version is release.sh's RELEASE_GOTOOLCHAIN default, read from there so
# that one line names it (deploy/dockerfile_test.go reads it the same way).
release_default="$(sed -n 's/^RELEASE_GOTOOLCHAIN="\${RELEASE_GOTOOLCHAIN:-\(go[0-9.]*\)}"$/\1/p' .ci/release.sh)"
FUZZ_GOTOOLCHAIN="${DELTASYNC_FUZZ_GOTOOLCHAIN:-${RELEASE_GOTOOLCHAIN:-$release_default}}"
if [ -z "$FUZZ_GOTOOLCHAIN" ]; then
	echo 'fuzz: no RELEASE_GOTOOLCHAIN="${RELEASE_GOTOOLCHAIN:-goX.Y.Z}" line in .ci/release.sh' >&2
	exit 2
fi
export GOTOOLCHAIN="$FUZZ_GOTOOLCHAIN"
if [ "$(go env GOVERSION)" != "$FUZZ_GOTOOLCHAIN" ]; then
	echo "fuzz: GOTOOLCHAIN=$FUZZ_GOTOOLCHAIN gives $(go env GOVERSION): the fuzzing toolchain could not be had" >&2
	exit 2
fi
MODULE="$(go list -m)"
CACHE="$(go env GOCACHE)/fuzz"

want() { # want TARGET: selected by the arguments (all when none)
	[ $# -eq 1 ] && [ -z "${SELECTED:-}" ] && return 0
	for s in $SELECTED; do [ "$s" = "$1" ] && return 0; done
	return 1
}
SELECTED="$*"

# fuzz_once DIR TARGET: fuzz one target.
fuzz_once() {
	go test -run '^$' -fuzz "^${2}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$MINIMIZE" -parallel "$PARALLEL" "$1"
}

failed=()
total=0
for pkg in $(go list ./...); do
	dir="${pkg#"$MODULE"}"
	dir=".${dir:-/}"
	targets="$(go test -list '^Fuzz' "$dir" 2>/dev/null | grep '^Fuzz' || true)"
	for target in $targets; do
		want "$target" || continue
		total=$((total + 1))
		echo "== fuzz $dir $target ($FUZZTIME)"
		if ! fuzz_once "$dir" "$target"; then
			failed+=("$dir $target")
		fi
		if [ "${DELTASYNC_FUZZ_SAVE:-}" = 1 ] && [ -d "$CACHE/$pkg/$target" ]; then
			mkdir -p "$dir/testdata/fuzz/$target"
			n=0
			for f in "$CACHE/$pkg/$target"/*; do
				[ -e "$dir/testdata/fuzz/$target/$(basename "$f")" ] && continue
				cp "$f" "$dir/testdata/fuzz/$target/"
				n=$((n + 1))
			done
			echo "   saved $n new corpus inputs to $dir/testdata/fuzz/$target"
		fi
	done
done
if [ "$total" -eq 0 ]; then
	echo "fuzz: no target matched: $SELECTED" >&2
	exit 2
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: ${#failed[@]} of $total targets found failing inputs (now in their testdata/fuzz; commit them with the fix):" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: $total targets, $FUZZTIME each, no failure"
