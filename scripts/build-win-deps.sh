#!/bin/sh
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
#
# Cross-builds every library sf2loki links for x86_64-w64-mingw32 from pinned Debian 12 source
# packages (`apt-get source NAME=VERSION`) into one prefix outside the clone, and writes the
# meson cross file that `make win-build` configures with. Nothing comes from anywhere but
# Debian's archive; the mingw zlib is Debian's binary package libz-mingw-w64-dev.
#
# usage: build-win-deps.sh            (make win-deps; scripts/install-deps.sh --windows first)
#
# Environment:
#   SF2LOKI_WIN_DEPS   the root of it all (default /var/cache/sf2loki-win):
#                        prefix/          the libraries, headers, DLLs and .pc files
#                        cross-mingw64.txt the meson cross file (also toolchain.cmake, wine-run)
#                        scratch/         downloads and build trees (build trees are removed
#                                         after each package installs; downloads are kept)
#   SF2LOKI_WIN_JOBS   parallel make jobs (default: the number of CPUs)
#
# Idempotent: prefix/.stamp holds the SHA-256 of this script, and a second run with the same
# script is a no-op. Each package also has its own stamp, keyed by the hash of everything it
# depends on (this script's shared part, the packages before it, its own build function), so
# an edit rebuilds the package it touches and the ones after it, not the whole prefix.

set -eu

ROOT=${SF2LOKI_WIN_DEPS:-/var/cache/sf2loki-win}
PREFIX=$ROOT/prefix
SCRATCH=$ROOT/scratch
CROSS_FILE=$ROOT/cross-mingw64.txt
CMAKE_TOOLCHAIN=$ROOT/toolchain.cmake
WINE_RUN=$ROOT/wine-run
JOBS=${SF2LOKI_WIN_JOBS:-$(nproc 2>/dev/null || echo 2)}
HOST=x86_64-w64-mingw32
MINGW_SYSROOT=/usr/$HOST

# NAME=VERSION as `apt-get source` takes it. Two newer security uploads (pcre2 10.42-1+deb12u2,
# openssl 3.0.22-1~deb12u2) have no .dsc on the archive mirrors: these are the newest served.
PACKAGES="
	libffi=3.4.4-1
	pcre2=10.42-1
	glib2.0=2.74.6-2+deb12u9
	openssl=3.0.20-1~deb12u2
	nghttp2=1.52.0-1+deb12u3
	curl=7.88.1-10+deb12u15
	jansson=2.14-2
	libyaml=0.2.5-1
	protobuf-c=1.4.1-1
	snappy=1.1.9-3
	avro-c=1.11.1-1
	sqlite3=3.40.1-2+deb12u2
	libpsl=0.21.2-1
	libsoup3=3.2.3-0+deb12u2
"

self=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/$(basename -- "$0")
script_hash=$(sha256sum "$self" | cut -c1-64)

log() {
	echo "build-win-deps: $*"
}

die() {
	echo "build-win-deps: $*" >&2
	exit 1
}

if [ -f "$PREFIX/.stamp" ] && [ "$(cat "$PREFIX/.stamp")" = "$script_hash" ] &&
	[ -f "$CROSS_FILE" ]; then
	log "up to date ($PREFIX, script $script_hash)"
	exit 0
fi

for tool in $HOST-gcc $HOST-g++ $HOST-windres $HOST-objdump wine apt-get dpkg-source cmake \
	meson ninja autoreconf make tclsh; do
	command -v "$tool" >/dev/null 2>&1 ||
		die "$tool not found: run scripts/install-deps.sh --windows"
done
[ -f "$MINGW_SYSROOT/lib/pkgconfig/zlib.pc" ] ||
	die "libz-mingw-w64-dev is missing: run scripts/install-deps.sh --windows"
[ -f /usr/share/publicsuffix/public_suffix_list.dat ] ||
	die "publicsuffix is missing: run scripts/install-deps.sh --windows"

mkdir -p "$PREFIX/bin" "$PREFIX/lib/pkgconfig" "$PREFIX/include" "$SCRATCH/dl" "$SCRATCH/src" \
	"$ROOT/wine"

# --- the toolchain descriptions -------------------------------------------------------------

# wine with the prefix's DLLs on its search path and a wine prefix of our own, so meson's
# cc.run() checks and the test programs find their DLLs and never touch ~/.wine
win_bin=Z:$(echo "$PREFIX/bin" | tr / '\\')
win_zlib=Z:$(echo "$MINGW_SYSROOT/lib" | tr / '\\')
cat >"$WINE_RUN" <<EOF
#!/bin/sh
# written by scripts/build-win-deps.sh: runs a Windows program under wine with the DLLs of
# $PREFIX/bin
WINEPREFIX=\${WINEPREFIX:-$ROOT/wine}
WINEDEBUG=\${WINEDEBUG:--all}
WINEPATH="$win_bin;$win_zlib\${WINEPATH:+;\$WINEPATH}"
export WINEPREFIX WINEDEBUG WINEPATH
exec wine "\$@"
EOF
chmod +x "$WINE_RUN"

# meson 1.0: the key is `pkgconfig` (`pkg-config` is ignored), and no sys_root (it would
# double the prefix through PKG_CONFIG_SYSROOT_DIR)
cat >"$CROSS_FILE" <<EOF
# written by scripts/build-win-deps.sh
[binaries]
c = '$HOST-gcc'
cpp = '$HOST-g++'
ar = '$HOST-ar'
strip = '$HOST-strip'
windres = '$HOST-windres'
objdump = '$HOST-objdump'
pkgconfig = 'pkg-config'
exe_wrapper = '$WINE_RUN'

[properties]
pkg_config_libdir = ['$PREFIX/lib/pkgconfig', '$MINGW_SYSROOT/lib/pkgconfig']

[built-in options]
c_args = ['-I$PREFIX/include']
cpp_args = ['-I$PREFIX/include']
c_link_args = ['-L$PREFIX/lib']
cpp_link_args = ['-L$PREFIX/lib']

[host_machine]
system = 'windows'
cpu_family = 'x86_64'
cpu = 'x86_64'
endian = 'little'
EOF

cat >"$CMAKE_TOOLCHAIN" <<EOF
# written by scripts/build-win-deps.sh
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER $HOST-gcc)
set(CMAKE_CXX_COMPILER $HOST-g++)
set(CMAKE_RC_COMPILER $HOST-windres)
set(CMAKE_FIND_ROOT_PATH $PREFIX $MINGW_SYSROOT)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
EOF

PKG_CONFIG_LIBDIR=$PREFIX/lib/pkgconfig:$MINGW_SYSROOT/lib/pkgconfig
PKG_CONFIG_PATH=
export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH

# the autotools and plain-make builds
cross_env() {
	env CC=$HOST-gcc CXX=$HOST-g++ AR=$HOST-ar RANLIB=$HOST-ranlib STRIP=$HOST-strip \
		WINDRES=$HOST-windres RC=$HOST-windres \
		CPPFLAGS="-I$PREFIX/include" LDFLAGS="-L$PREFIX/lib" "$@"
}

configure_host() {
	cross_env ./configure --host=$HOST --build="$(cc -dumpmachine)" --prefix="$PREFIX" "$@"
}

cmake_host() {
	src=$1
	shift
	cmake -S "$src" -B _build -G Ninja -DCMAKE_TOOLCHAIN_FILE="$CMAKE_TOOLCHAIN" \
		-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
		-DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_PREFIX_PATH="$PREFIX" "$@"
	cmake --build _build -j "$JOBS"
}

meson_host() {
	meson setup _build --cross-file "$CROSS_FILE" --prefix="$PREFIX" --libdir=lib \
		--buildtype=release --wrap-mode=nodownload "$@"
	meson compile -C _build -j "$JOBS"
	meson install -C _build --quiet
}

# writes a .pc file for builds whose CMake installs none: write_pc NAME VERSION LIBS [EXTRA]
write_pc() {
	cat >"$PREFIX/lib/pkgconfig/$1.pc" <<EOF
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: $1
Description: $1 (cross-built by sf2loki's scripts/build-win-deps.sh)
Version: $2
Libs: -L\${libdir} $3
Cflags: -I\${includedir}
${4:-}
EOF
}

# --- the packages (build_NAME runs in the unpacked source tree) -------------------------------

# GLib needs dependency('intl'). Debian has no mingw gettext, and with nls disabled GLib never
# translates: a libintl whose functions return their msgid is all it takes.
build_libintl() {
	cat >"$PREFIX/include/libintl.h" <<'EOF'
/* a no-op libintl written by sf2loki's scripts/build-win-deps.sh: nothing is translated */
#pragma once
#include <locale.h>
/* Windows <locale.h> has no LC_MESSAGES; gettext's own libintl.h defines it the same way */
#ifndef LC_MESSAGES
#define LC_MESSAGES 1729
#endif
#ifdef __cplusplus
extern "C" {
#endif
char *gettext(const char *msgid) __attribute__((format_arg(1)));
char *dgettext(const char *domain, const char *msgid) __attribute__((format_arg(2)));
char *dcgettext(const char *domain, const char *msgid, int category)
	__attribute__((format_arg(2)));
char *ngettext(const char *msgid, const char *plural, unsigned long n)
	__attribute__((format_arg(1))) __attribute__((format_arg(2)));
char *dngettext(const char *domain, const char *msgid, const char *plural, unsigned long n)
	__attribute__((format_arg(2))) __attribute__((format_arg(3)));
char *dcngettext(const char *domain, const char *msgid, const char *plural, unsigned long n,
		 int category) __attribute__((format_arg(2))) __attribute__((format_arg(3)));
char *textdomain(const char *domain);
char *bindtextdomain(const char *domain, const char *dir);
char *bind_textdomain_codeset(const char *domain, const char *codeset);
#ifdef __cplusplus
}
#endif
EOF
	cat >libintl.c <<'EOF'
#include <libintl.h>
char *gettext(const char *msgid) { return (char *)msgid; }
char *dgettext(const char *domain, const char *msgid) { (void)domain; return (char *)msgid; }
char *dcgettext(const char *domain, const char *msgid, int category)
{ (void)domain; (void)category; return (char *)msgid; }
char *ngettext(const char *msgid, const char *plural, unsigned long n)
{ return (char *)(n == 1 ? msgid : plural); }
char *dngettext(const char *domain, const char *msgid, const char *plural, unsigned long n)
{ (void)domain; return (char *)(n == 1 ? msgid : plural); }
char *dcngettext(const char *domain, const char *msgid, const char *plural, unsigned long n,
		 int category)
{ (void)domain; (void)category; return (char *)(n == 1 ? msgid : plural); }
char *textdomain(const char *domain) { return (char *)(domain != 0 ? domain : "messages"); }
char *bindtextdomain(const char *domain, const char *dir) { (void)domain; return (char *)dir; }
char *bind_textdomain_codeset(const char *domain, const char *codeset)
{ (void)domain; return (char *)codeset; }
EOF
	$HOST-gcc -O2 -c -I"$PREFIX/include" -o libintl.o libintl.c
	rm -f "$PREFIX/lib/libintl.a"
	$HOST-ar rcs "$PREFIX/lib/libintl.a" libintl.o
}

build_libffi() {
	configure_host --enable-shared --disable-static --disable-docs --disable-multi-os-directory
	cross_env make -j "$JOBS"
	cross_env make install
}

# With JIT (sljit has an x86-64 Windows backend): GLib compiles G_REGEX_OPTIMIZE patterns
# (the redactor's, the shape rules') to machine code, and without it logs a debug line about
# falling back on every such regex, which a debug-level log then shows.
build_pcre2() {
	configure_host --enable-shared --disable-static --enable-pcre2-8 --disable-pcre2-16 \
		--disable-pcre2-32 --disable-pcre2grep-libz --disable-pcre2grep-libbz2 --enable-jit
	grep -q '^#define SUPPORT_JIT' src/config.h || die "pcre2: configure left JIT out"
	cross_env make -j "$JOBS"
	cross_env make install
}

build_glib2_0() {
	meson_host -Dtests=false -Dnls=disabled -Dlibelf=disabled -Dsysprof=disabled -Dman=false \
		-Dgtk_doc=false -Dselinux=disabled -Dxattr=false -Dlibmount=disabled \
		-Dinstalled_tests=false
}

# OpenSSL's Configure prefixes CC with --cross-compile-prefix itself: no cross_env here
build_openssl() {
	./Configure mingw64 --cross-compile-prefix=$HOST- --prefix="$PREFIX" --libdir=lib \
		--openssldir="$PREFIX/ssl" shared no-tests
	make -j "$JOBS" build_sw
	make install_sw
}

build_nghttp2() {
	cmake_host . -DENABLE_LIB_ONLY=ON -DENABLE_SHARED_LIB=ON -DENABLE_STATIC_LIB=OFF
	cmake --install _build
}

# --disable-pthreads: curl's threaded resolver then uses Windows threads, and no
# libwinpthread-1.dll has to ship. No CA bundle is compiled in: on Windows the daemon asks for
# the system store (CURLSSLOPT_NATIVE_CA).
build_curl() {
	# Debian's series ends with the patches that make the GnuTLS and NSS flavours (its rules
	# pop them for the OpenSSL one): take them off again
	patch -R -p1 <debian/patches/99_nss.patch >/dev/null
	patch -R -p1 <debian/patches/90_gnutls.patch >/dev/null
	autoreconf -fi >/dev/null 2>&1
	configure_host --enable-shared --disable-static --with-openssl="$PREFIX" \
		--with-nghttp2="$PREFIX" --with-zlib="$MINGW_SYSROOT" --disable-pthreads \
		--without-libpsl --without-brotli --without-zstd --without-libidn2 --without-librtmp \
		--without-libssh2 --without-ca-bundle --without-ca-path --disable-ldap \
		--disable-manual --disable-docs
	cross_env make -j "$JOBS" -C lib
	cross_env make -C lib install
	cross_env make -C include install
	cross_env make install-pkgconfigDATA install-binSCRIPTS
}

build_jansson() {
	cmake_host . -DJANSSON_BUILD_SHARED_LIBS=ON -DJANSSON_BUILD_DOCS=OFF \
		-DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON
	cmake --install _build
}

build_libyaml() {
	cmake_host . -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF -DINSTALL_CMAKE_DIR=lib/cmake/yaml
	cmake --install _build
	write_pc yaml-0.1 0.2.5 -lyaml
}

# the runtime only: the generator protoc-c runs natively (Debian's protobuf-c-compiler)
build_protobuf_c() {
	configure_host --enable-shared --disable-static --disable-protoc
	cross_env make -j "$JOBS"
	cross_env make install
}

# C++ inside: its DLL carries libgcc and libstdc++ statically, so no C++ runtime DLL ships
build_snappy() {
	cmake_host . -DBUILD_SHARED_LIBS=ON -DSNAPPY_BUILD_TESTS=OFF \
		-DSNAPPY_BUILD_BENCHMARKS=OFF -DSNAPPY_FUZZING_BUILD=OFF \
		-DCMAKE_SHARED_LINKER_FLAGS="-static-libgcc -static-libstdc++"
	cmake --install _build
	write_pc snappy 1.1.9 -lsnappy
}

# avro-c takes WIN32 for MSVC: compiling as C++ (/TP) and msinttypes.h are for MSVC only
build_avro_c() {
	sed -i 's|^\([[:space:]]*\)add_definitions(/TP)|\1if (MSVC)\n\1add_definitions(/TP)\n\1endif ()|' \
		CMakeLists.txt
	grep -q '^[[:space:]]*if (MSVC)$' CMakeLists.txt || die "avro-c: no /TP block to fix"
	sed -i '/^#ifdef _WIN32$/{N;s|^#ifdef _WIN32\n\([[:space:]]*#include <avro/msinttypes.h>\)|#ifdef _MSC_VER\n\1|}' \
		src/avro/platform.h
	grep -B1 'msinttypes.h' src/avro/platform.h | grep -q _MSC_VER ||
		die "avro-c: no msinttypes.h include to fix"
	# the library only: its tools would want the shared library, which is not built
	cmake -S . -B _build -G Ninja -DCMAKE_TOOLCHAIN_FILE="$CMAKE_TOOLCHAIN" \
		-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
		-DCMAKE_PREFIX_PATH="$PREFIX" \
		-DCMAKE_C_FLAGS="-I$PREFIX/include -I$MINGW_SYSROOT/include"
	cmake --build _build -j "$JOBS" --target avro-static
	cp _build/src/libavro.a "$PREFIX/lib/libavro.a"
	cp src/avro.h "$PREFIX/include/avro.h"
	rm -rf "$PREFIX/include/avro"
	mkdir -p "$PREFIX/include/avro"
	cp src/avro/*.h "$PREFIX/include/avro/"
	# CMake's avro-c.pc has no Version (the project needs >= 1.10) and no private deps
	write_pc avro-c 1.11.1 -lavro "Requires.private: jansson snappy zlib"
}

# The tree's configure would build the Unix VFS for a cross host; the amalgamation is
# generated with the native tools instead and compiled for Windows, where it picks os_win.c.
build_sqlite3() {
	mkdir -p _native
	(cd _native && ../configure --disable-tcl >/dev/null && make -j "$JOBS" sqlite3.c)
	$HOST-gcc -O2 -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_COLUMN_METADATA \
		-DSQLITE_ENABLE_UNLOCK_NOTIFY -DSQLITE_OMIT_LOAD_EXTENSION -c \
		-o _native/sqlite3-win.o _native/sqlite3.c
	rm -f "$PREFIX/lib/libsqlite3.a"
	$HOST-ar rcs "$PREFIX/lib/libsqlite3.a" _native/sqlite3-win.o
	cp _native/sqlite3.h _native/sqlite3ext.h "$PREFIX/include/"
	write_pc sqlite3 3.40.1 -lsqlite3
}

# Debian's tree has an empty list/: the list comes from Debian's publicsuffix package
build_libpsl() {
	meson_host -Druntime=no -Dbuiltin=true \
		-Dpsl_file=/usr/share/publicsuffix/public_suffix_list.dat -Ddocs=false \
		-Dc_args=-D_POSIX_THREAD_SAFE_FUNCTIONS
}

build_libsoup3() {
	meson_host -Dintrospection=disabled -Dvapi=disabled -Dtests=false -Dgssapi=disabled \
		-Dntlm=disabled -Dbrotli=disabled -Dtls_check=false -Dsysprof=disabled \
		-Ddocs=disabled -Dautobahn=disabled -Dpkcs11_tests=disabled \
		-Dc_link_args="-L$PREFIX/lib -lintl"
}

# --- the driver -----------------------------------------------------------------------------

# what every package depends on: the versions, the toolchain files and the helpers above
key=$(sed -n '1,/^# --- the packages/p' "$self" | sha256sum | cut -c1-64)

# a version without its epoch, as in the .dsc file name
upstream_file_version() {
	echo "${1#*:}"
}

build_one() {
	name=$1
	version=$2
	fn=build_$(echo "$name" | tr -c 'a-z0-9\n' '_')
	body=$(sed -n "/^$fn() {\$/,/^}\$/p" "$self")
	[ -n "$body" ] || die "no $fn in $self"
	key=$(printf '%s\n%s\n%s\n' "$key" "$version" "$body" | sha256sum | cut -c1-64)
	stamp=$PREFIX/.stamp-$name
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
		log "$name $version: up to date"
		return 0
	fi
	started=$(date +%s)
	tree=$SCRATCH/src/$name
	rm -rf "$tree"
	if [ -n "$version" ]; then
		dsc=$SCRATCH/dl/${name}_$(upstream_file_version "$version").dsc
		if [ ! -f "$dsc" ]; then
			log "$name $version: downloading"
			# apt's download user must be able to write there, or it warns and runs as root
			chown _apt "$SCRATCH/dl" 2>/dev/null || true
			(cd "$SCRATCH/dl" && apt-get source --download-only -qq "$name=$version") ||
				die "apt-get source $name=$version failed (deb-src entry missing? run scripts/install-deps.sh --windows)"
		fi
		dpkg-source --no-check -x "$dsc" "$tree" >/dev/null ||
			die "cannot unpack $dsc"
	else
		mkdir -p "$tree"
	fi
	log "$name $version: building (log: $tree.log)"
	# not in an if: `set -e` must stay in force inside the build function
	set +e
	(
		set -e
		cd "$tree"
		"$fn"
	) >"$tree.log" 2>&1
	rc=$?
	set -e
	if [ "$rc" -ne 0 ]; then
		tail -n 40 "$tree.log" >&2
		die "$name $version failed: see $tree.log"
	fi
	echo "$key" >"$stamp"
	rm -rf "$tree"
	log "$name $version: done in $(($(date +%s) - started)) s"
}

# wine makes its prefix on first use; done once here rather than inside GLib's first cc.run()
if [ ! -f "$ROOT/wine/system.reg" ]; then
	log "creating the wine prefix $ROOT/wine"
	WINEPREFIX=$ROOT/wine WINEDEBUG=-all wineboot -i >"$SCRATCH/wineboot.log" 2>&1 || true
	WINEPREFIX=$ROOT/wine wineserver -w || true
fi

total_started=$(date +%s)
build_one libintl ""
for spec in $PACKAGES; do
	build_one "${spec%%=*}" "${spec#*=}"
done
# the Windows program's runtime files besides the DLLs
cp "$MINGW_SYSROOT/lib/zlib1.dll" "$PREFIX/bin/"
echo "$script_hash" >"$PREFIX/.stamp"
log "prefix ready in $(($(date +%s) - total_started)) s: $PREFIX (cross file $CROSS_FILE)"
