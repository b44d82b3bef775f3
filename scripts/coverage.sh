#!/bin/sh
# Prints line coverage and fails when src/coordinate/ drops below 95 % of lines.
#   sh scripts/coverage.sh BUILD_DIR   (a tree configured with -Db_coverage=true, tests run)
set -eu
build=${1:?usage: coverage.sh BUILD_DIR}
root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
# search only the build tree: the wine prefix under it links back to /
cd "$build"

echo "coverage: src/ (all)"
gcovr -r "$root" --filter "$root/src/" --print-summary -o /dev/null .
echo
echo "coverage: src/coordinate/ (gate: 95 % of lines)"
gcovr -r "$root" --filter "$root/src/coordinate/" --print-summary --fail-under-line 95 .
