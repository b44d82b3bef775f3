#!/bin/sh
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
#
# Puts a Windows program and every DLL it needs into one folder: the DLL imports are read with
# objdump -p and followed recursively; a DLL found in none of the search directories is taken
# to be part of Windows itself (KERNEL32, WS2_32, ...) and left out.
#
# usage: win-collect-dlls.sh EXE OUT_DIR SEARCH_DIR...
set -eu

[ $# -ge 3 ] || {
	echo "usage: win-collect-dlls.sh EXE OUT_DIR SEARCH_DIR..." >&2
	exit 2
}
exe=$1
out=$2
shift 2
objdump=${OBJDUMP:-x86_64-w64-mingw32-objdump}

rm -rf "$out"
mkdir -p "$out"
cp "$exe" "$out/"

# the DLL file in a search directory, matched without regard to case as Windows does
find_dll() {
	for dir in $search; do
		found=$(find "$dir" -maxdepth 1 -type f -iname "$name" 2>/dev/null | head -n 1)
		if [ -n "$found" ]; then
			echo "$found"
			return 0
		fi
	done
	return 1
}

search="$*"
queue="$out/$(basename "$exe")"
while [ -n "$queue" ]; do
	set -- $queue
	file=$1
	shift
	queue="$*"
	for name in $("$objdump" -p "$file" | sed -n 's/^[[:space:]]*DLL Name: //p'); do
		[ -e "$out/$name" ] && continue
		if dll=$(find_dll); then
			cp "$dll" "$out/$name"
			queue="$queue $out/$name"
		fi
	done
done
ls "$out"
