#!/bin/sh
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
#
# check-plist.sh PLIST: the generated launchd plist parses (Python's plistlib, the same XML
# format launchd reads) and has what launchd needs to run sf2loki as a kept-alive job.
# Exit 77 (skip) when /usr/bin/python3 is missing.

set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 PLIST" >&2
	exit 2
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

/usr/bin/python3 - "$1" <<'EOF'
import os
import plistlib
import sys

with open(sys.argv[1], "rb") as f:
    job = plistlib.load(f)
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

for p in problems:
    print(f"FAIL: {sys.argv[1]}: {p}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"ok: {sys.argv[1]}: {job['Label']} runs {' '.join(args)}")
EOF
