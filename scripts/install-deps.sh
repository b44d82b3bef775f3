#!/bin/sh
# Installs every Debian 12 package sf2loki needs to build, test and run.
# Idempotent and non-interactive; run as root (or through sudo).
set -eu

PACKAGES="
	build-essential pkg-config meson ninja-build cmake git ca-certificates
	clang clang-format libclang-rt-14-dev
	libglib2.0-dev libglib2.0-bin
	libcurl4-openssl-dev libjansson-dev libyaml-dev libssl-dev zlib1g-dev
	libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev protobuf-compiler
	libsnappy-dev libavro-dev libsoup-3.0-dev
	python3 python3-yaml python3-grpcio python3-protobuf python3-snappy
	python3-avro python3-jwt python3-botocore python3-cryptography
	gcc-mingw-w64-x86-64 wine wine64
	systemd openssl procps gcovr
	prometheus
	debhelper dpkg-dev fakeroot lintian rpm
"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
