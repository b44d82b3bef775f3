#!/bin/sh
# Installs every Debian 12 package sf2loki needs to build, test and run.
# Idempotent and non-interactive; run as root (or through sudo).
#
# usage: install-deps.sh [--windows] [--image]
#
# --windows adds what the Windows cross build needs (scripts/build-win-deps.sh, make win-build,
# make win-test): the mingw-w64 C/C++ toolchain and tools, wine, msitools/wixl, osslsigncode,
# publicsuffix, and a deb-src entry for bookworm so `apt-get source` works. The Linux build
# and `make test` never ask for it.
#
# --image adds what `make image` and `make image-test` need (packaging/image/): mmdebstrap,
# buildah, podman and their helpers. Heavy, and only those targets use them.
set -eu

windows=0
image=0
for arg in "$@"; do
	case $arg in
	--windows) windows=1 ;;
	--image) image=1 ;;
	*)
		echo "usage: install-deps.sh [--windows] [--image]" >&2
		exit 2
		;;
	esac
done

PACKAGES="
	build-essential pkg-config meson ninja-build cmake git ca-certificates
	clang clang-format libclang-rt-14-dev
	libglib2.0-dev libglib2.0-bin dconf-cli dconf-gsettings-backend
	libcurl4-openssl-dev libjansson-dev libyaml-dev libssl-dev zlib1g-dev
	libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev protobuf-compiler
	libsnappy-dev libavro-dev libsoup-3.0-dev
	python3 python3-yaml python3-grpcio python3-protobuf python3-snappy
	python3-avro python3-jwt python3-botocore python3-cryptography
	python3-jsonschema
	gcc-mingw-w64-x86-64 wine wine64
	systemd openssl procps gcovr
	prometheus
	debhelper dpkg-dev fakeroot lintian rpm
"

# the cross toolchain uses the win32 thread model (Debian's default alternative): never mix in
# the -posix variants, whose libstdc++/libgcc would want libwinpthread-1.dll
WINDOWS_PACKAGES="
	gcc-mingw-w64-x86-64-win32 g++-mingw-w64-x86-64-win32 mingw-w64-tools
	libz-mingw-w64-dev binutils-mingw-w64-x86-64
	wine wine64 msitools wixl osslsigncode publicsuffix
	dpkg-dev cmake meson ninja-build protobuf-c-compiler tcl xz-utils
"

# the rootfs from Debian's archive, the image without a registry base, the smoke test's
# runtime (crun, conmon and netavark come with podman)
IMAGE_PACKAGES="
	mmdebstrap buildah podman uidmap fuse-overlayfs slirp4netns dpkg-dev
"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

# apt-get source needs source indices; the default debian.sources only lists binaries. The
# source entry is the machine's own binary entry with deb-src, so it uses whatever mirror this
# machine is set up with. (The file name avoids "sf2loki": the package test checks that a purge
# leaves no file of that name behind.)
DEB_SRC_FILE=/etc/apt/sources.list.d/debian-deb-src.sources
DEB_BIN_FILE=/etc/apt/sources.list.d/debian.sources
deb_src_added=0
if [ "$windows" -eq 1 ]; then
	# an earlier version of this script wrote the entry under another name
	$SUDO rm -f /etc/apt/sources.list.d/sf2loki-deb-src.sources
fi
if [ "$windows" -eq 1 ] && [ ! -f "$DEB_SRC_FILE" ]; then
	if [ ! -f "$DEB_BIN_FILE" ]; then
		echo "install-deps: $DEB_BIN_FILE is missing: add a deb-src entry for bookworm," \
			"bookworm-updates and bookworm-security by hand" >&2
		exit 1
	fi
	sed -e 's/^Types:.*/Types: deb-src/' "$DEB_BIN_FILE" | $SUDO tee "$DEB_SRC_FILE" >/dev/null
	deb_src_added=1
fi
if [ "$windows" -eq 1 ]; then
	PACKAGES="$PACKAGES $WINDOWS_PACKAGES"
fi
if [ "$image" -eq 1 ]; then
	PACKAGES="$PACKAGES $IMAGE_PACKAGES"
fi

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	if [ "$deb_src_added" -eq 1 ]; then
		$SUDO apt-get update -qq
	fi
	echo "install-deps: all packages present"
	exit 0
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
