#!/usr/bin/env bash
# reliability-gate.sh — `make release` runs this first: it refuses to build
# while RELIABILITY.md does not vouch for the code being released. The file
# records, in machine-readable comment lines that .ci/reliability.sh writes,
#   <!-- revision: <full commit sha> -->     (…-dirty: run on uncommitted changes)
#   <!-- result: passed -->                  (or failed)
# and the release is refused (exit 1, saying why) when the record is missing
# or failed, or anything under sync/, deltalog/ or catalog/ differs from that
# revision: in HEAD's commits or as uncommitted changes in the work tree.
# Changes elsewhere (docs, deploy/, cmd/) do not make the record stale.
#
# CI (.ci/test.sh) runs .ci/release.sh directly and is never blocked by this.
# Emergency override: DELTASYNC_RELEASE_STALE_RELIABILITY=1 make release.
set -euo pipefail
cd "$(dirname "$0")/.."

file="${RELIABILITY_FILE:-RELIABILITY.md}"
paths=(sync deltalog catalog)
override=DELTASYNC_RELEASE_STALE_RELIABILITY

refuse() {
	{
		echo "release: refused: $file $*."
		echo "release: run .ci/reliability.sh on this revision (with the services it needs) and commit the $file it writes;"
		echo "release: to release anyway (an emergency), set $override=1."
	} >&2
	exit 1
}

if [ "${!override:-}" = 1 ]; then
	echo "release: $override=1: not checking that $file is current" >&2
	exit 0
fi
[ -f "$file" ] || refuse "does not exist"
rev="$(sed -n 's/^<!-- revision: \([^ ]*\) -->$/\1/p' "$file" | head -n1)"
result="$(sed -n 's/^<!-- result: \([a-z]*\) -->$/\1/p' "$file" | head -n1)"
[ -n "$rev" ] || refuse "records no revision (no '<!-- revision: <sha> -->' line): it predates the gate or was edited by hand"
case "$rev" in
*-dirty) refuse "was produced from uncommitted changes (revision $rev): it vouches for no commit" ;;
esac
[ "$result" = passed ] || refuse "records that its tests did not pass (result: ${result:-none}) at $rev"
git cat-file -e "$rev^{commit}" 2>/dev/null || refuse "records revision $rev, which is not a commit of this repository"
if ! git diff --quiet "$rev" HEAD -- "${paths[@]}"; then
	refuse "was produced at $rev, and HEAD differs from it under ${paths[*]} ($(git diff --name-only "$rev" HEAD -- "${paths[@]}" | wc -l) files, e.g. $(git diff --name-only "$rev" HEAD -- "${paths[@]}" | head -n3 | paste -sd, -))"
fi
if ! git diff --quiet HEAD -- "${paths[@]}"; then
	refuse "was produced at $rev, and the work tree has uncommitted changes under ${paths[*]} ($(git diff --name-only HEAD -- "${paths[@]}" | head -n3 | paste -sd, -))"
fi
echo "release: $file vouches for $rev (${paths[*]} unchanged since)" >&2
