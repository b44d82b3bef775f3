#!/bin/sh
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
#
# check-unit.sh UNIT BINARY: verifies the generated systemd unit with systemd-analyze.
#
# `systemd-analyze verify` exits 0 for most mistakes (an unknown key, an unparsable value) and
# only prints them, so any line it prints fails the check. In a build tree two things differ
# from an installed system and are adjusted in a scratch copy: ExecStart= points at the
# installed path, which does not exist yet, so the copy runs the built BINARY; and the
# sf2loki user usually does not exist, so a notice about that user alone is tolerated.
# Before trusting a clean result, a deliberately broken copy must be caught, so a
# systemd-analyze that reports nothing at all cannot turn this into a silent pass.
# Exit 77 (skip) when systemd-analyze is not installed.

set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 UNIT BINARY" >&2
	exit 2
fi
unit=$1
binary=$2
case $binary in
/*) ;;
*) binary=$(pwd)/$binary ;;
esac

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: systemd-analyze is not installed"
	exit 77
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sf2loki-check-unit.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# the generated file itself: substituted, and carrying what the service relies on
grep -q '@[a-z_]*@' "$unit" && fail "$unit has unsubstituted @variables@"
for line in 'Type=notify' 'User=sf2loki' 'Group=sf2loki' 'StateDirectory=sf2loki' \
	'ConfigurationDirectory=sf2loki' 'RestartPreventExitStatus=2' 'Restart=on-failure' \
	'TimeoutStopSec=30s' 'WatchdogSec=60s' 'ProtectSystem=strict' 'NoNewPrivileges=yes' \
	'ExecReload=/bin/kill -HUP $MAINPID'; do
	grep -qx "$line" "$unit" || fail "$unit lacks the line '$line'"
done
grep -qx 'ExecStart=/.*/sf2loki run --config /etc/sf2loki/config.yaml' "$unit" ||
	fail "$unit: ExecStart= is not '<bindir>/sf2loki run --config /etc/sf2loki/config.yaml'"

# verify_copy NAME SED-SCRIPT: verifies a copy edited by SED-SCRIPT; 0 when nothing is wrong
verify_copy() {
	dir="$scratch/$1"
	mkdir -p "$dir"
	sed -e "s|^ExecStart=[^ ]*/sf2loki |ExecStart=$binary |" -e "$2" "$unit" \
		>"$dir/sf2loki.service"
	status=0
	(cd "$dir" && systemd-analyze verify --man=no ./sf2loki.service) \
		>"$dir/out" 2>&1 || status=$?
	# the account comes from sysusers.d at install time; missing here is expected
	grep -v -i -e "user.*sf2loki.*\(not found\|unknown\|no such\|failed to resolve\)" \
		-e "failed to resolve.*sf2loki" "$dir/out" >"$dir/problems" || true
	if [ "$status" -ne 0 ] || [ -s "$dir/problems" ]; then
		sed 's/^/  /' "$dir/out"
		return 1
	fi
	return 0
}

if verify_copy canary 's/^ProtectSystem=/ProtectSystm=/' >"$scratch/canary.log"; then
	fail "systemd-analyze did not notice a misspelt key; it cannot vouch for the unit here"
fi

if ! verify_copy unit ''; then
	fail "systemd-analyze verify reported problems in $unit (output above)"
fi
echo "ok: $unit verified by $(systemd-analyze --version | head -n 1)"
