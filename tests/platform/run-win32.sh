#!/bin/sh
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
#
# Builds the Windows half of the platform layer with mingw-w64 together with the contract suite
# (test-platform.c) and runs it under wine; also the SCM tests when platform/sfl-scm.c and a
# non-empty tests/platform/test-scm.c exist. Prints one TAP stream and exits non-zero when any
# case failed.
#
# usage: run-win32.sh [build-dir]    (default: a temp dir, removed afterwards)
#
# Without mingw-w64 or wine it reports a skip. meson runs this with protocol 'tap', where only a
# "1..0 # SKIP" plan (exit status 0) counts as a skip: exit status 77 would be an error there.

set -u

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
root=$(CDPATH='' cd -- "$here/../.." && pwd)
cc=${MINGW_CC:-x86_64-w64-mingw32-gcc}
wine=${WINE:-wine}

skip() {
	echo "run-win32.sh: $1" >&2
	echo "1..0 # SKIP $1"
	exit 0
}

command -v "$cc" >/dev/null 2>&1 || skip "$cc not found (Debian: gcc-mingw-w64-x86-64)"
command -v "$wine" >/dev/null 2>&1 || skip "$wine not found (Debian: wine, wine64)"

if [ $# -ge 1 ] && [ -n "$1" ]; then
	out=$1
	mkdir -p "$out" || exit 1
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/sfl-win32.XXXXXX") || exit 1
	trap 'rm -rf "$out"' EXIT
	trap 'exit 130' INT TERM
fi
out=$(CDPATH='' cd -- "$out" && pwd)

# the project's warnings, so the Windows half stays as clean as the POSIX one
cflags="-std=c11 -O1 -g -Wall -Wextra -Werror -Wformat=2 -Wmissing-prototypes
	-Wstrict-prototypes -Wold-style-definition -Wshadow -Wpointer-arith -Wcast-align
	-Wredundant-decls -Wnested-externs -Wundef -Wwrite-strings -Wimplicit-fallthrough
	-Wdeclaration-after-statement -Wno-unused-parameter -Wno-missing-field-initializers"
# static: wine then needs no mingw runtime DLLs on its path
ldflags="-static"
libs="-lshell32 -lole32 -luuid -ladvapi32"

# starts compiling @2 into the object @1 in the background
pids=
objects=
compile() {
	# shellcheck disable=SC2086 # the flag list is meant to split
	"$cc" $cflags -I"$root/platform" -I"$here" -c -o "$out/$1" "$2" >"$out/$1.log" 2>&1 &
	pids="$pids $!"
	objects="$objects $1"
}

# waits for the compilers; any failure ends the run with their output
compiled() {
	ok=1
	# shellcheck disable=SC2086 # a list of names without spaces
	set -- $objects
	for pid in $pids; do
		wait "$pid" || ok=0
		cat "$out/$1.log" >&2
		shift
	done
	pids=
	objects=
	if [ "$ok" -eq 0 ]; then
		echo "Bail out! cannot compile with $cc (see stderr)"
		exit 1
	fi
}

link() {
	exe=$1
	shift
	# shellcheck disable=SC2086 # the flag lists are meant to split
	if ! (cd "$out" && "$cc" -o "$exe" "$@" $ldflags $libs) >"$out/$exe.log" 2>&1; then
		cat "$out/$exe.log" >&2
		echo "Bail out! cannot link $exe with $cc (see stderr)"
		exit 1
	fi
}

# in parallel: <windows.h> and <shlobj.h> make each file take seconds
compile sfl-platform-win32.o "$root/platform/win32/sfl-platform-win32.c"
compile sfl-platform-common.o "$root/platform/sfl-platform-common.c"
compile test-platform.o "$here/test-platform.c"
compile test-platform-proc-win32.o "$here/test-platform-proc-win32.c"
exes=test-platform.exe
if [ -f "$root/platform/sfl-scm.c" ] && [ -s "$here/test-scm.c" ]; then
	compile sfl-scm.o "$root/platform/sfl-scm.c"
	compile test-scm.o "$here/test-scm.c"
	exes="$exes test-scm.exe"
fi
if [ -f "$root/platform/win32/sfl-service-win32.c" ] && [ -s "$here/test-service-win32.c" ]; then
	compile sfl-service-win32.o "$root/platform/win32/sfl-service-win32.c"
	compile test-service-win32.o "$here/test-service-win32.c"
	exes="$exes test-service-win32.exe"
fi
compiled
link test-platform.exe sfl-platform-win32.o sfl-platform-common.o test-platform.o \
	test-platform-proc-win32.o
case $exes in
*test-scm.exe*) link test-scm.exe sfl-scm.o sfl-platform-win32.o sfl-platform-common.o test-scm.o ;;
esac
case $exes in
*test-service-win32.exe*)
	link test-service-win32.exe sfl-scm.o sfl-service-win32.o test-service-win32.o -ladvapi32
	;;
esac

WINEDEBUG=-all
WINEDLLOVERRIDES="mscoree,mshtml="
WINEPREFIX="$out/wineprefix"
export WINEDEBUG WINEDLLOVERRIDES WINEPREFIX

# the programs' TAP streams are joined into one: results renumbered, one plan at the end
total=0
failed=0
for exe in $exes; do
	# into files, not pipes: the wineserver started now outlives us and would hold them open
	"$wine" "$out/$exe" >"$out/$exe.tap" 2>"$out/$exe.stderr" </dev/null
	rc=$?
	cat "$out/$exe.stderr" >&2
	# Windows consoles end lines with CRLF; TAP wants LF
	summary=$(awk -v offset="$total" -v listing="$out/$exe.out" '
		{ sub(/\r$/, "") }
		/^1\.\.[0-9]+/ { planned = substr($1, 4) + 0; have_plan = 1; next }
		/^(not )?ok [0-9]+/ {
			count++
			if ($1 == "not") { bad++; head = "not ok " } else { head = "ok " }
			rest = $0
			sub(/^(not )?ok [0-9]+/, "", rest)
			print head (offset + count) rest >listing
			next
		}
		{ print >listing }
		END { printf "%d %d %d %d\n", count + 0, bad + 0, planned + 0, have_plan + 0 }
	' "$out/$exe.tap")
	# shellcheck disable=SC2086 # four numbers
	set -- $summary
	count=$1 bad=$2 planned=$3 have_plan=$4
	[ -f "$out/$exe.out" ] && cat "$out/$exe.out" && rm -f "$out/$exe.out"
	total=$((total + count))
	if [ "$bad" -gt 0 ]; then
		failed=1
	fi
	# a crash or an early exit: whatever did not report is a failure of its own
	if [ "$have_plan" -eq 0 ] || [ "$count" -ne "$planned" ] ||
		{ [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; }; then
		total=$((total + 1))
		echo "not ok $total - $exe exited with status $rc after $count of $planned results"
		failed=1
	fi
done
echo "1..$total"
exit "$failed"
