#!/bin/sh
# `make package-test`: builds the deb and the rpm and install-tests them.
#
# deb: as root and under CI=true (or SF2LOKI_PACKAGE_INSTALL_TEST=1), a real `dpkg -i` on this
# machine (CI is a throwaway Debian 12 VM), then
# files, modes, the account, the unit, `sf2loki version` and `sf2loki check` as sf2loki, an
# upgrade to a repacked higher version that must keep an edited config and state.json,
# remove, purge, and what remains. rpm: `rpm -qlp`, `rpm -qp --scripts`, and an install into a
# scratch root to check modes and owners. Parts whose tools or privileges are missing print
# SKIP; any FAIL makes the exit status 1.
set -eu
cd "$(dirname "$0")/.."
. packaging/pkg-common.sh

pass=0
fail=0
skip=0
ok() {
	pass=$((pass + 1))
	echo "PASS: $*"
}
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
}
skipped() {
	skip=$((skip + 1))
	echo "SKIP: $*"
}
# check DESCRIPTION COMMAND...: PASS when the command succeeds
check() {
	what=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi
}
# mode_is PATH MODE OWNER GROUP
mode_is() {
	got=$(stat -c '%a %U %G' "$1" 2>/dev/null || echo missing)
	if [ "$got" = "$2 $3 $4" ]; then ok "$1 is $got"; else bad "$1 is $got, want $2 $3 $4"; fi
}
# as_sf2loki COMMAND...: runs it as the service account (runuser, else setpriv)
as_sf2loki() {
	if command -v runuser >/dev/null; then
		runuser -u sf2loki -- "$@"
	else
		setpriv --reuid=sf2loki --regid=sf2loki --init-groups -- "$@"
	fi
}
am_root() { [ "$(id -u)" -eq 0 ]; }

deb_install_test() {
	deb=$1
	check "dpkg -i $(basename "$deb")" dpkg -i "$deb"
	check "package state is installed" sh -c \
		'dpkg-query -W -f="\${Status}" sf2loki | grep -qx "install ok installed"'

	mode_is /usr/bin/sf2loki 755 root root
	mode_is /lib/systemd/system/sf2loki.service 644 root root
	mode_is /usr/lib/sysusers.d/sf2loki.conf 644 root root
	mode_is /etc/sf2loki 755 root root
	mode_is /etc/sf2loki/config.yaml 640 root sf2loki
	mode_is /var/lib/sf2loki 750 sf2loki sf2loki
	mode_is /usr/share/glib-2.0/schemas/org.sf2loki.gschema.xml 644 root root
	mode_is /usr/share/sf2loki/config.schema.json 644 root root
	# libglib2.0-0's dpkg trigger compiles the schema directory, so GSettings finds ours
	if command -v gsettings >/dev/null; then
		check "the GSettings schema is compiled (gsettings list-keys org.sf2loki.service)" \
			sh -c 'gsettings list-keys org.sf2loki.service | grep -qx log-level'
	fi
	check "config.yaml is a conffile" sh -c \
		'dpkg-query -W -f="\${Conffiles}" sf2loki | grep -q "^ /etc/sf2loki/config.yaml "'

	entry=$(getent passwd sf2loki || true)
	uid=$(echo "$entry" | cut -d: -f3)
	if [ -n "$entry" ] && [ "$uid" -lt 1000 ]; then
		ok "system user sf2loki: $entry"
	else
		bad "system user sf2loki missing or not a system uid: '$entry'"
	fi
	check "group sf2loki exists" getent group sf2loki

	check "unit is enabled" sh -c '[ "$(systemctl is-enabled sf2loki.service)" = enabled ]'
	if [ -d /run/systemd/system ]; then
		check "unit is not started" sh -c '! systemctl is-active --quiet sf2loki.service'
	else
		skipped "unit is not started (systemd is not running here)"
	fi
	if out=$(systemd-analyze verify /lib/systemd/system/sf2loki.service 2>&1); then
		ok "systemd-analyze verify sf2loki.service"
	else
		bad "systemd-analyze verify sf2loki.service: $out"
	fi

	if v=$(as_sf2loki /usr/bin/sf2loki version 2>&1); then
		ok "sf2loki version as sf2loki: $v"
	else
		bad "sf2loki version as sf2loki: $v"
	fi
	if out=$(as_sf2loki /usr/bin/sf2loki check --config /etc/sf2loki/config.yaml 2>&1); then
		ok "sf2loki check --config /etc/sf2loki/config.yaml as sf2loki: $out"
	else
		bad "sf2loki check as sf2loki: $out"
	fi
	if getent passwd nobody >/dev/null; then
		check "config.yaml is unreadable to other users" sh -c \
			'! runuser -u nobody -- cat /etc/sf2loki/config.yaml'
	fi
}

deb_upgrade_test() {
	deb=$1
	work=$2
	# the admin's edits and the daemon's checkpoints, which the upgrade must not touch
	echo "# edited by package-test" >>/etc/sf2loki/config.yaml
	printf '{"version": 1, "checkpoints": {"package-test": "kept"}}\n' >/var/lib/sf2loki/state.json
	chown sf2loki:sf2loki /var/lib/sf2loki/state.json
	chmod 0600 /var/lib/sf2loki/state.json
	config_sum=$(sha256sum /etc/sf2loki/config.yaml)
	state_sum=$(sha256sum /var/lib/sf2loki/state.json)

	# "the previous build" is the one just installed; the next one is the same payload under
	# a higher version whose default config changed too, so dpkg sees both sides modified
	rm -rf "$work/next"
	dpkg-deb -R "$deb" "$work/next"
	old=$(sed -n 's/^Version: //p' "$work/next/DEBIAN/control")
	new="$old+pkgtest1"
	sed -i "s/^Version: .*/Version: $new/" "$work/next/DEBIAN/control"
	echo "# changed upstream by package-test" >>"$work/next/etc/sf2loki/config.yaml"
	dpkg-deb --root-owner-group -b "$work/next" "$work/sf2loki-next.deb" >/dev/null

	check "upgrade $old -> $new (dpkg -i --force-confold)" \
		dpkg -i --force-confdef --force-confold "$work/sf2loki-next.deb"
	check "installed version is $new" sh -c \
		"[ \"\$(dpkg-query -W -f='\${Version}' sf2loki)\" = '$new' ]"
	check "upgrade kept the edited config.yaml" sh -c \
		"[ \"\$(sha256sum /etc/sf2loki/config.yaml)\" = '$config_sum' ]"
	check "upgrade kept state.json" sh -c \
		"[ \"\$(sha256sum /var/lib/sf2loki/state.json)\" = '$state_sum' ]"
	mode_is /var/lib/sf2loki/state.json 600 sf2loki sf2loki
	mode_is /var/lib/sf2loki 750 sf2loki sf2loki
	mode_is /etc/sf2loki/config.yaml 640 root sf2loki
	check "unit still enabled after upgrade" sh -c \
		'[ "$(systemctl is-enabled sf2loki.service)" = enabled ]'
	check "edited config still passes sf2loki check" \
		as_sf2loki /usr/bin/sf2loki check --config /etc/sf2loki/config.yaml
}

deb_remove_purge_test() {
	check "dpkg -r sf2loki" dpkg -r sf2loki
	check "remove deleted the binary" test ! -e /usr/bin/sf2loki
	check "remove deleted the unit" test ! -e /lib/systemd/system/sf2loki.service
	check "remove kept state.json" test -f /var/lib/sf2loki/state.json
	check "remove kept config.yaml" test -f /etc/sf2loki/config.yaml

	check "dpkg -P sf2loki" dpkg -P sf2loki
	check "purge: package unknown to dpkg" sh -c '! dpkg-query -W sf2loki 2>/dev/null'
	check "purge removed /var/lib/sf2loki" test ! -e /var/lib/sf2loki
	check "purge removed /etc/sf2loki" test ! -e /etc/sf2loki
	check "purge removed the statoverride" sh -c \
		'! dpkg-statoverride --list /etc/sf2loki/config.yaml'
	# /var/lib/containers: the image's root file systems (make image), not this install
	left=$(find /etc /lib /usr /var -name '*sf2loki*' \
		-not -path '/var/lib/dpkg/*' -not -path '/var/cache/*' -not -path '/usr/src/*' \
		-not -path '/var/lib/containers/*' -not -path "$(pwd)/*" 2>/dev/null || true)
	if [ -z "$left" ]; then
		ok "purge left no sf2loki files in /etc /lib /usr /var"
	else
		bad "purge left: $(echo "$left" | tr '\n' ' ')"
	fi
	# by design: Debian keeps system accounts so a reused uid never inherits stray files
	if getent passwd sf2loki >/dev/null; then
		echo "NOTE: the sf2loki account remains after purge (by design)"
	fi
}

deb_test() {
	if ! command -v dpkg-buildpackage >/dev/null || ! command -v dh >/dev/null; then
		skipped "deb: dpkg-buildpackage or debhelper not installed (scripts/install-deps.sh)"
		return
	fi
	if sh packaging/build-deb.sh; then
		ok "make deb (dpkg-buildpackage, lintian without errors)"
	else
		bad "make deb"
		return
	fi
	deb=$(ls "$PKG_OUT"/deb/sf2loki_*.deb | head -n 1)
	check "deb contents list" dpkg-deb -c "$deb"

	if ! am_root; then
		skipped "deb install test: needs root (CI runs it as root; try: sudo make package-test)"
		return
	fi
	# installing into the running system is for throwaway machines: CI, or when asked for
	if [ "${CI:-}" != "true" ] && [ -z "${SF2LOKI_PACKAGE_INSTALL_TEST:-}" ]; then
		skipped "deb install test: installs into this system; runs under CI=true or with" \
			"SF2LOKI_PACKAGE_INSTALL_TEST=1"
		return
	fi
	# never purge an installation (or state) this test did not create
	if dpkg-query -W -f='${Status}' sf2loki 2>/dev/null | grep -q installed ||
		[ -e /var/lib/sf2loki ] || [ -e /etc/sf2loki ]; then
		skipped "deb install test: sf2loki is already installed or /var/lib/sf2loki or" \
			"/etc/sf2loki exists here, and the test would purge them"
		return
	fi
	work="$PKG_OUT/deb-test"
	rm -rf "$work"
	mkdir -p "$work"
	deb_install_test "$deb"
	deb_upgrade_test "$deb" "$work"
	deb_remove_purge_test
}

rpm_test() {
	if ! command -v rpmbuild >/dev/null; then
		skipped "rpm: rpmbuild not installed (scripts/install-deps.sh)"
		return
	fi
	if sh packaging/build-rpm.sh; then
		ok "make rpm (rpmbuild)"
	else
		bad "make rpm"
		return
	fi
	rpm=$(find "$PKG_OUT/rpm/RPMS" -name 'sf2loki-*.rpm' | head -n 1)
	list=$(rpm -qlp "$rpm" 2>/dev/null)
	echo "rpm -qlp $(basename "$rpm"):"
	echo "$list" | sed 's/^/  /'
	for f in /usr/bin/sf2loki /usr/lib/systemd/system/sf2loki.service \
		/usr/lib/sysusers.d/sf2loki.conf /usr/lib/systemd/system-preset/80-sf2loki.preset \
		/etc/sf2loki/config.yaml /var/lib/sf2loki \
		/usr/share/glib-2.0/schemas/org.sf2loki.gschema.xml \
		/usr/share/sf2loki/config.schema.json; do
		if echo "$list" | grep -qx "$f"; then ok "rpm ships $f"; else bad "rpm lacks $f"; fi
	done
	check "rpm marks config.yaml %config(noreplace)" sh -c \
		"rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' '$rpm' 2>/dev/null |
			grep -qx '/etc/sf2loki/config.yaml cn'"
	scripts="$PKG_OUT/rpm/scripts.txt"
	rpm -qp --scripts "$rpm" >"$scripts" 2>/dev/null
	echo "rpm -qp --scripts:"
	sed 's/^/  /' "$scripts"
	check "rpm %pre creates the sf2loki user" grep -q 'useradd -r' "$scripts"
	check "rpm %post presets (enables) the unit" grep -q 'preset sf2loki.service' "$scripts"
	check "rpm %preun stops and disables the unit on erase" \
		grep -q 'disable --now sf2loki.service' "$scripts"
	check "rpm %postun restarts the unit on upgrade" \
		grep -q 'try-restart sf2loki.service' "$scripts"

	if ! am_root; then
		skipped "rpm scratch-root install: needs root to set owners"
		return
	fi
	root=$(pwd)/$PKG_OUT/rpm-root
	rm -rf "$root"
	mkdir -p "$root/etc"
	# the account %pre would create (scripts do not run in the scratch root)
	printf 'root:x:0:0:root:/root:/bin/sh\nsf2loki:x:990:990::/var/lib/sf2loki:/sbin/nologin\n' \
		>"$root/etc/passwd"
	printf 'root:x:0:\nsf2loki:x:990:\n' >"$root/etc/group"
	set -- --root "$root" --nodeps --noscripts
	if rpm --help 2>/dev/null | grep -q -- --force-debian; then
		set -- "$@" --force-debian
	fi
	if rpm "$@" -i "$rpm"; then
		ok "rpm --root <scratch> --nodeps --noscripts -i"
	else
		bad "rpm --root <scratch> -i"
		return
	fi
	for spec in "usr/bin/sf2loki 755 0 0" "usr/lib/systemd/system/sf2loki.service 644 0 0" \
		"usr/lib/sysusers.d/sf2loki.conf 644 0 0" "etc/sf2loki 755 0 0" \
		"etc/sf2loki/config.yaml 640 0 990" "var/lib/sf2loki 750 990 990"; do
		# shellcheck disable=SC2086 # split "path mode uid gid" on purpose
		set -- $spec
		got=$(stat -c '%a %u %g' "$root/$1" 2>/dev/null || echo missing)
		if [ "$got" = "$2 $3 $4" ]; then
			ok "rpm root: /$1 is $got"
		else
			bad "rpm root: /$1 is $got, want $2 $3 $4"
		fi
	done
	rm -rf "$root"
}

start=$(date +%s)
deb_test
rpm_test
echo "package-test: $pass passed, $fail failed, $skip skipped ($(($(date +%s) - start)) s)"
[ "$fail" -eq 0 ]
