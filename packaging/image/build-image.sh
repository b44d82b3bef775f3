#!/bin/sh
# `make image`: the OCI image of sf2loki from Debian 12 packages and our deb, with no base
# image from a registry (docs/deployment/container.md):
#   1. the deb (make deb) unless IMAGE_DEB names one;
#   2. a root filesystem from Debian's archive with mmdebstrap: the essential set, the deb and
#      what it depends on, the chart's user (10001:10001), state and secrets directories;
#   3. an image from that tarball with buildah (`from scratch`, no `buildah run`), committed
#      as IMAGE_NAME:IMAGE_TAG and written to build-pkg/image/ as an OCI archive.
# Runs as root (mmdebstrap's root mode, buildah's storage); IMAGE_MIRROR and IMAGE_SUITE pick
# the archive.
set -eu
cd "$(dirname "$0")/../.."
. packaging/pkg-common.sh

# the chart's defaults (deploy/helm/values.yaml image.repository, Chart.yaml appVersion,
# securityContext): packaging/image/image-test.sh checks they agree
IMAGE_NAME=${IMAGE_NAME:-ghcr.io/sf2loki/sf2loki}
IMAGE_TAG=${IMAGE_TAG:-$PKG_VERSION}
IMAGE_UID=10001
IMAGE_MIRROR=${IMAGE_MIRROR:-http://deb.debian.org/debian}
IMAGE_SECURITY_MIRROR=${IMAGE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
IMAGE_SUITE=${IMAGE_SUITE:-bookworm}
out="$PKG_OUT/image"

for tool in mmdebstrap buildah; do
	command -v "$tool" >/dev/null || {
		echo "image: $tool is missing (sh scripts/install-deps.sh --image)" >&2
		exit 1
	}
done
if [ "$(id -u)" -ne 0 ]; then
	echo "image: run as root (mmdebstrap --mode=root, buildah's system storage)" >&2
	exit 1
fi

deb=${IMAGE_DEB:-}
if [ -z "$deb" ]; then
	sh packaging/build-deb.sh
	deb=$(ls "$PKG_OUT"/deb/sf2loki_"$PKG_VERSION"-*_*.deb | head -n 1)
fi
deb=$(realpath "$deb")
mkdir -p "$out"
rootfs="$(realpath "$out")/rootfs.tar"
# the deb as a one-package file:// repository, so apt resolves its dependencies from the
# archive and the automount hook makes it visible inside the chroot
repo="$(realpath "$out")/repo"
rm -rf "$repo"
mkdir -p "$repo"
cp "$deb" "$repo/"
(cd "$repo" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null)

# the commit's time, so two builds of one commit give the same rootfs listing and dates
if [ -z "${SOURCE_DATE_EPOCH:-}" ] && git rev-parse HEAD >/dev/null 2>&1; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
fi
export SOURCE_DATE_EPOCH

echo "image: rootfs from $IMAGE_MIRROR ($IMAGE_SUITE) with $(basename "$deb")"
# the user exists before the deb is configured, so its sysusers snippet keeps this uid and
# the files the package owns are the chart's runAsUser/runAsGroup's
mmdebstrap --mode=root --variant=essential --format=tar \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
	--include=ca-certificates,sf2loki \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--essential-hook="echo 'sf2loki:x:$IMAGE_UID:' >>\"\$1/etc/group\"" \
	--essential-hook="echo 'sf2loki:x:$IMAGE_UID:$IMAGE_UID:sf2loki:/var/lib/sf2loki:/usr/sbin/nologin' >>\"\$1/etc/passwd\"" \
	--essential-hook="echo 'sf2loki:!:19000::::::' >>\"\$1/etc/shadow\"" \
	--customize-hook='install -d -m 0750 -o 10001 -g 10001 "$1/var/lib/sf2loki"' \
	--customize-hook='install -d -m 0750 -o 0 -g 10001 "$1/etc/sf2loki/secrets"' \
	--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*' \
	--customize-hook='rm -f "$1"/etc/apt/sources.list "$1"/etc/apt/sources.list.d/*' \
	--customize-hook='chroot "$1" /usr/bin/sf2loki version' \
	"$IMAGE_SUITE" "$rootfs" \
	"deb $IMAGE_MIRROR $IMAGE_SUITE main" \
	"deb $IMAGE_MIRROR $IMAGE_SUITE-updates main" \
	"deb $IMAGE_SECURITY_MIRROR $IMAGE_SUITE-security main" \
	"deb [trusted=yes] file://$repo ./"

echo "image: $IMAGE_NAME:$IMAGE_TAG from $(basename "$rootfs") with buildah"
# vfs: no overlay mount needed, so this works inside an unprivileged container too
export STORAGE_DRIVER="${STORAGE_DRIVER:-vfs}"
ctr=$(buildah from --name "sf2loki-image-$$" scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah add "$ctr" "$rootfs" /
buildah config \
	--os linux --arch "$(dpkg --print-architecture)" \
	--user "$IMAGE_UID:$IMAGE_UID" \
	--workingdir /var/lib/sf2loki \
	--entrypoint '["/usr/bin/sf2loki"]' \
	--cmd 'run --config /etc/sf2loki/config.yaml' \
	--port 8080/tcp \
	--volume /var/lib/sf2loki \
	--env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
	--label org.opencontainers.image.title=sf2loki \
	--label org.opencontainers.image.version="$PKG_VERSION" \
	--label org.opencontainers.image.licenses=Apache-2.0 \
	--label org.opencontainers.image.base.name="debian:$IMAGE_SUITE (mmdebstrap, no registry base)" \
	--created-by "packaging/image/build-image.sh" \
	"$ctr"
buildah commit --format oci --timestamp "$SOURCE_DATE_EPOCH" --rm "$ctr" "$IMAGE_NAME:$IMAGE_TAG"
trap - EXIT
rm -f "$out/sf2loki-$IMAGE_TAG.oci.tar"
buildah push "$IMAGE_NAME:$IMAGE_TAG" "oci-archive:$out/sf2loki-$IMAGE_TAG.oci.tar:$IMAGE_NAME:$IMAGE_TAG"
buildah inspect --type image "$IMAGE_NAME:$IMAGE_TAG" >"$out/image-inspect.json"
echo "image: $IMAGE_NAME:$IMAGE_TAG in buildah's storage and $out/sf2loki-$IMAGE_TAG.oci.tar"
