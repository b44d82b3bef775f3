#!/bin/sh
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
#
# Puts a Windows program and every DLL it needs into one folder: the DLL imports are read with
# objdump -p and followed recursively; a DLL found in none of the search directories is taken
# to be part of Windows itself (KERNEL32, WS2_32, ...) and left out. The copies are stripped
# of what neither the loader nor relocation needs (strip --strip-unneeded); the originals, with
# their symbols for a debugger, stay where they were (EXE in the build directory, the DLLs in
# the dependency prefix). SFL_WIN_NO_STRIP=1 keeps the copies as they are.
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
strip=${STRIP:-x86_64-w64-mingw32-strip}

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

# what the folder weighs: before stripping, and after
size_of() {
	du -cb "$out"/* | tail -n 1 | cut -f1
}
before=$(size_of)
ls "$out"
if [ "${SFL_WIN_NO_STRIP:-0}" = 1 ]; then
	echo "win-collect-dlls: $(ls "$out" | wc -l) files, $before bytes (not stripped)"
	exit 0
fi
for file in "$out"/*; do
	"$strip" --strip-unneeded "$file"
done
echo "win-collect-dlls: $(ls "$out" | wc -l) files, $before bytes, $(size_of) bytes stripped"
