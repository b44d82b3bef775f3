#!/bin/sh
# `make deb`: builds the binary deb from packaging/deb/debian into build-pkg/deb/.
# Runs as any user (fakeroot); DEB_BUILD_OPTIONS defaults to nocheck and every core.
set -eu
cd "$(dirname "$0")/.."
. packaging/pkg-common.sh

changelog_version=$(dpkg-parsechangelog -l packaging/deb/debian/changelog -S Version)
if [ "${changelog_version%-*}" != "$PKG_VERSION" ]; then
	echo "deb: debian/changelog says $changelog_version but meson.build says $PKG_VERSION;" \
		"add a changelog entry" >&2
	exit 1
fi

out="$PKG_OUT/deb"
src="$out/sf2loki-$PKG_VERSION"
rm -rf "$out"
copy_tree "$src"
rm -rf "$src/packaging/deb/debian"
# the orig tarball lets the same tree build a 3.0 (quilt) source package too (-S)
tar -C "$out" -cJf "$out/sf2loki_$PKG_VERSION.orig.tar.xz" "sf2loki-$PKG_VERSION"
cp -r packaging/deb/debian "$src/debian"

: "${DEB_BUILD_OPTIONS:=nocheck parallel=$(nproc)}"
export DEB_BUILD_OPTIONS
echo "deb: dpkg-buildpackage -b -uc -us in $src (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS)"
(cd "$src" && dpkg-buildpackage -b -uc -us) >"$out/build.log" 2>&1 || {
	tail -n 25 "$out/build.log" >&2
	echo "deb: build failed, full log in $out/build.log" >&2
	exit 1
}
ls "$out"/*.deb

if command -v lintian >/dev/null; then
	echo "deb: lintian"
	# errors fail the build; warnings and info are printed for review
	lintian --fail-on error --display-info "$out"/sf2loki_*.changes
else
	echo "deb: lintian not installed, not checked"
fi
