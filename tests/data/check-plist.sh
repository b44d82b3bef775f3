#!/bin/sh
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
#
# check-plist.sh PLIST [daemon|agent SF2LOKI_BIN]: the generated launchd plist parses
# (Python's plistlib, the same XML format launchd reads) and has what launchd needs to run
# sf2loki as a kept-alive job. With a kind and the binary it also checks, for that kind
# (docs/deployment/macos.md): relaunch on a crash or failed exit only (KeepAlive is exactly
# SuccessfulExit false), ExitTimeOut at least service.shutdown_grace's default (read from
# `sf2loki config reference`) plus 5 s, the checkpoint file inside the working directory, and
# the paths: the daemon's outside any home directory, the agent's under
# ~/Library/Application Support/sf2loki and ~/Library/Logs/sf2loki of one home.
# Exit 77 (skip) when /usr/bin/python3 is missing.

set -eu

if [ $# -ne 1 ] && [ $# -ne 3 ]; then
	echo "usage: $0 PLIST [daemon|agent SF2LOKI_BIN]" >&2
	exit 2
fi
KIND=${2:-}
GRACE=
if [ -n "$KIND" ]; then
	# the row of the ServiceConfig table: | `shutdown_grace` | duration | `25s` | ...
	GRACE=$("$3" config reference | sed -n 's/^| `shutdown_grace` | [^|]* | `\([^`]*\)` |.*/\1/p')
	if [ -z "$GRACE" ]; then
		echo "FAIL: no shutdown_grace default in \`$3 config reference\`" >&2
		exit 1
	fi
fi

if [ ! -x /usr/bin/python3 ]; then
	echo "SKIP: /usr/bin/python3 is not installed"
	exit 77
fi

if grep -q '@[a-z_]*@' "$1"; then
	echo "FAIL: $1 has unsubstituted @variables@" >&2
	exit 1
fi

/usr/bin/python3 -c 'import plistlib,sys; plistlib.load(open(sys.argv[1],"rb"))' "$1"

/usr/bin/python3 - "$1" "$KIND" "$GRACE" <<'EOF'
import os
import plistlib
import re
import sys

with open(sys.argv[1], "rb") as f:
    job = plistlib.load(f)
kind, grace_text = sys.argv[2], sys.argv[3]
problems = []


def need(key, kind):
    if not isinstance(job.get(key), kind):
        problems.append(f"{key} missing or not a {kind.__name__}")
        return None
    return job[key]


need("Label", str)
args = need("ProgramArguments", list)
if args is not None:
    if len(args) != 4 or not all(isinstance(a, str) for a in args):
        problems.append(f"ProgramArguments should be [binary, run, --config, path]: {args}")
    else:
        if not (os.path.isabs(args[0]) and os.path.basename(args[0]) == "sf2loki"):
            problems.append(f"ProgramArguments[0] is not an absolute path to sf2loki: {args[0]}")
        if args[1:3] != ["run", "--config"]:
            problems.append(f"ProgramArguments should continue with run --config: {args}")
        if not os.path.isabs(args[3]):
            problems.append(f"the config path is not absolute: {args[3]}")
if need("RunAtLoad", bool) is not True:
    problems.append("RunAtLoad is not true")
if not isinstance(job.get("KeepAlive"), (bool, dict)):
    problems.append("KeepAlive missing or neither a boolean nor a dictionary")
for key in ("WorkingDirectory", "StandardOutPath", "StandardErrorPath"):
    value = need(key, str)
    # launchd starts jobs in /, so nothing may depend on a relative path
    if value is not None and not os.path.isabs(value):
        problems.append(f"{key} is not absolute: {value}")

if kind:
    if job.get("KeepAlive") != {"SuccessfulExit": False}:
        problems.append(f"KeepAlive should relaunch on a crash or failed exit only "
                        f"({{'SuccessfulExit': False}}), not {job.get('KeepAlive')!r}")
    m = re.fullmatch(r"(\d+)(s|m)", grace_text)
    if not m:
        problems.append(f"cannot read the shutdown_grace default {grace_text!r}")
    else:
        grace = int(m.group(1)) * (60 if m.group(2) == "m" else 1)
        timeout = job.get("ExitTimeOut")
        if not isinstance(timeout, int) or timeout < grace + 5:
            problems.append(f"ExitTimeOut {timeout!r} is under shutdown_grace ({grace} s) + 5: "
                            "launchd would SIGKILL the drain")
    workdir = job.get("WorkingDirectory", "")
    state = job.get("EnvironmentVariables", {}).get("SF2LOKI_STATE__FILE__PATH", "")
    if os.path.dirname(state) != workdir:
        problems.append(f"the checkpoint file {state!r} is not in WorkingDirectory {workdir!r}")
    config = args[3] if args and len(args) == 4 else ""
    logs = [job.get("StandardOutPath", ""), job.get("StandardErrorPath", "")]
    if kind == "daemon":
        for value in [config, workdir] + logs:
            if value.startswith(("/Users/", "/home/")):
                problems.append(f"a system daemon path is in a home directory: {value}")
        if not config.endswith("/etc/sf2loki/config.yaml"):
            problems.append(f"the daemon's config should be <sysconfdir>/sf2loki/config.yaml: "
                            f"{config}")
    elif kind == "agent":
        m = re.fullmatch(r"(/.+)/Library/Application Support/sf2loki", workdir)
        if not m:
            problems.append(f"the agent's WorkingDirectory should be "
                            f"<home>/Library/Application Support/sf2loki: {workdir}")
        else:
            home = m.group(1)
            if config != f"{workdir}/config.yaml":
                problems.append(f"the agent's config should be {workdir}/config.yaml: {config}")
            for value in logs:
                if os.path.dirname(value) != f"{home}/Library/Logs/sf2loki":
                    problems.append(f"the agent logs to {value}, not {home}/Library/Logs/sf2loki/")
        if "UserName" in job or "GroupName" in job:
            problems.append("an agent runs as its user: UserName/GroupName are for daemons")
    else:
        problems.append(f"unknown kind {kind!r}")

for p in problems:
    print(f"FAIL: {sys.argv[1]}: {p}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"ok: {sys.argv[1]}: {kind or 'launchd job'} {job['Label']} runs {' '.join(args)}")
EOF
