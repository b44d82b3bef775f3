# Sourced by build-deb.sh and build-rpm.sh: the version and the source tree to package.
# shellcheck shell=sh

# shellcheck disable=SC2034 # used by the scripts that source this file
PKG_OUT=${PKG_BUILD_DIR:-build-pkg}
PKG_VERSION=$(sed -n "s/^  version: '\([^']*\)',.*/\1/p" meson.build | head -n 1)
[ -n "$PKG_VERSION" ] || { echo "packaging: no version in meson.build" >&2; exit 1; }

# copy_tree DEST: the files a fresh clone would have plus uncommitted ones, never the
# ignored build trees, so a developer's work in progress is what gets packaged
copy_tree() {
	mkdir -p "$1"
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -co --exclude-standard | while IFS= read -r f; do
			[ -f "$f" ] && printf '%s\n' "$f"
		done | tar -cf - -T - | tar -xf - -C "$1"
	else
		tar -cf - --exclude='./build' --exclude='./build-*' --exclude='./.fuzz' \
			--exclude='./.git' . | tar -xf - -C "$1"
	fi
}
