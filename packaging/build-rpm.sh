#!/bin/sh
# `make rpm`: builds the binary rpm from packaging/rpm/sf2loki.spec.in into build-pkg/rpm/.
# On Debian the BuildRequires name Fedora packages, so rpmbuild runs with --nodeps there.
set -eu
cd "$(dirname "$0")/.."
. packaging/pkg-common.sh

top="$(pwd)/$PKG_OUT/rpm"
rm -rf "$top"
mkdir -p "$top/SOURCES" "$top/SPECS" "$top/BUILD" "$top/RPMS" "$top/SRPMS" "$top/stage"
copy_tree "$top/stage/sf2loki-$PKG_VERSION"
tar -C "$top/stage" -czf "$top/SOURCES/sf2loki-$PKG_VERSION.tar.gz" "sf2loki-$PKG_VERSION"
rm -rf "$top/stage"
sed "s/@VERSION@/$PKG_VERSION/g" packaging/rpm/sf2loki.spec.in >"$top/SPECS/sf2loki.spec"

set -- --define "_topdir $top"
if [ -f /etc/debian_version ]; then
	# dpkg, not rpm, knows the build dependencies here; Debian's debugedit cannot split
	# debug info into an rpm debuginfo package either
	set -- "$@" --nodeps --define "debug_package %{nil}"
fi
echo "rpm: rpmbuild -bb $top/SPECS/sf2loki.spec"
rpmbuild -bb "$@" "$top/SPECS/sf2loki.spec" >"$top/build.log" 2>&1 || {
	tail -n 25 "$top/build.log" >&2
	echo "rpm: build failed, full log in $top/build.log" >&2
	exit 1
}
find "$top/RPMS" -name '*.rpm'
