#!/bin/sh
# Prints line coverage and fails when src/coordinate/ drops below 95 % of lines.
#   sh scripts/coverage.sh BUILD_DIR   (a tree configured with -Db_coverage=true, tests run)
set -eu
build=${1:?usage: coverage.sh BUILD_DIR}
root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
# search only the build tree: the wine prefix under it links back to /
cd "$build"

echo "coverage: src/ (all)"
# the report goes to a file: gcovr replaces its output path, which would turn /dev/null into
# a regular file when run as root
gcovr -r "$root" --filter "$root/src/" --print-summary -o coverage-src.txt .
echo
echo "coverage: src/coordinate/ (gate: 95 % of lines)"
gcovr -r "$root" --filter "$root/src/coordinate/" --print-summary --fail-under-line 95 .
