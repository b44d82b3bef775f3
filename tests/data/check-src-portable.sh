#!/bin/sh
# Fails when anything under src/ includes an OS header or tests _WIN32: the portable service
# reaches the operating system only through platform/sfl-platform.h.
# Usage: check-src-portable.sh SRC_DIR
set -eu
SRC=${1:?usage: check-src-portable.sh SRC_DIR}

pattern='^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif).*(_WIN32|_WIN64|__linux__|__APPLE__|__unix__)|^[[:space:]]*#[[:space:]]*include[[:space:]]*<(unistd\.h|fcntl\.h|windows\.h|winsock2\.h|sys/[^>]*|glib-unix\.h|gio/gunix[^>]*|pthread\.h|dirent\.h|netinet/[^>]*|arpa/[^>]*|poll\.h|signal\.h|termios\.h|pwd\.h|grp\.h|dlfcn\.h)>'

found=$(grep -rEn --include='*.c' --include='*.h' "$pattern" "$SRC" || true)
if [ -n "$found" ]; then
	echo "OS-specific code under $SRC (use platform/sfl-platform.h instead):" >&2
	echo "$found" >&2
	exit 1
fi
echo "src/ is free of OS headers and OS conditionals"
